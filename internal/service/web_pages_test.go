package service

import (
	"context"
	"testing"

	"github.com/dynabench-go/dynabench"
)

func TestWebPageRules(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		f := newFixture(t, engine, dynabench.TaskSettings{}, says(label("negative")))
		alice, bob := f.users["alice"], f.users["bob"]

		// Logout revokes the session token; an unknown token is no error.
		_, tok, err := f.svc.Login(ctx, "alice", "password-alice")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.svc.Logout(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Authenticate(ctx, tok); !dynabench.IsCode(err, dynabench.EUNAUTHORIZED) {
			t.Errorf("token still valid after logout: %v", err)
		}
		if err := f.svc.Logout(ctx, "dbk_nonsense"); err != nil {
			t.Errorf("logout with unknown token: %v", err)
		}

		// The create page's context: only one of the current round, only for a user.
		if c, err := f.svc.CreateContext(ctx, alice, "tk", f.contexts[0].ID); err != nil || c.ID != f.contexts[0].ID {
			t.Errorf("CreateContext = %v, %v", c, err)
		}
		_, err = f.svc.CreateContext(ctx, alice, "tk", 999999)
		wantCode(t, err, dynabench.ENOTFOUND)
		_, err = f.svc.CreateContext(ctx, nil, "tk", f.contexts[0].ID)
		wantCode(t, err, dynabench.EUNAUTHORIZED)

		// A running score per round.
		f.create(t, "alice", 0, "I loved it.", "positive")
		f.create(t, "alice", 1, "It was bad.", "negative")
		st, err := f.svc.MyRoundStats(ctx, alice, "tk", 1)
		if err != nil || st.Submitted != 2 || st.Fooled != 1 {
			t.Errorf("MyRoundStats = %+v, %v; want 2 submitted, 1 fooled", st, err)
		}
		if st, err := f.svc.MyRoundStats(ctx, bob, "tk", 1); err != nil || st.Submitted != 0 {
			t.Errorf("bob's stats = %+v, %v", st, err)
		}

		// Flagged examples: owners only; the writer's flag and a validator's flag both count.
		e := f.create(t, "alice", 2, "Meh.", "neutral")
		if _, err := f.svc.FlagExample(ctx, alice, e.ID, "typo"); err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.FlaggedExamples(ctx, bob, "tk", 10)
		wantCode(t, err, dynabench.EFORBIDDEN)
		list, err := f.svc.FlaggedExamples(ctx, f.admin, "tk", 10)
		if err != nil || len(list) != 1 || list[0].ID != e.ID {
			t.Fatalf("FlaggedExamples = %v, %v", list, err)
		}
		if c, err := f.svc.ExampleContext(ctx, f.admin, list[0]); err != nil || c.ID != f.contexts[2].ID {
			t.Errorf("ExampleContext = %v, %v", c, err)
		}
		_, err = f.svc.ExampleContext(ctx, bob, list[0])
		wantCode(t, err, dynabench.ENOTFOUND)

		if _, err := f.svc.OwnedTask(ctx, f.admin, "tk"); err != nil {
			t.Errorf("OwnedTask(admin) = %v", err)
		}
		_, err = f.svc.OwnedTask(ctx, bob, "tk")
		wantCode(t, err, dynabench.EFORBIDDEN)
		_, err = f.svc.OwnedTask(ctx, nil, "tk")
		wantCode(t, err, dynabench.EUNAUTHORIZED)

		if task, rounds, err := f.svc.TaskRounds(ctx, nil, "tk"); err != nil || task.Code != "tk" || len(rounds) != 1 {
			t.Errorf("TaskRounds = %v, %v, %v", task, rounds, err)
		}
	})
}
