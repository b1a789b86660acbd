package sqlstore_test

import (
	"fmt"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
)

// TestLargeIDs starts every id sequence past 2^32: ids are int64 end to end, and no query may
// let PostgreSQL infer a 32-bit parameter type for one.
func TestLargeIDs(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		const start = int64(5_000_000_000)
		for _, table := range []string{"users", "tokens", "tasks", "models", "rounds", "contexts", "examples", "validations"} {
			if e.engine == sqlstore.Postgres {
				e.exec(t, fmt.Sprintf(`ALTER TABLE %s ALTER COLUMN id RESTART WITH %d`, table, start))
			} else {
				e.exec(t, `INSERT INTO sqlite_sequence (name, seq) VALUES ($1, $2)`, table, start-1)
			}
		}
		s := e.s
		a, v := e.user(t), e.user(t)
		if a.ID < start {
			t.Fatalf("user id %d: sequence not moved", a.ID)
		}
		tok := &dynabench.Token{UserID: a.ID, Kind: "api", Hash: []byte("h")}
		must(t, s.CreateToken(ctx, tok))
		must(t, s.DeleteToken(ctx, a.ID, tok.ID))
		tk := e.task(t)
		must(t, s.AddTaskOwner(ctx, tk.ID, a.ID))
		m := e.model(t, tk.ID, a.ID)
		r := &dynabench.Round{TaskID: tk.ID, Number: 1, ModelIDs: []int64{m.ID}}
		must(t, s.CreateRound(ctx, r))
		c := e.contexts(t, r, 2, "")[0]
		if _, err := s.PickContext(ctx, dynabench.ContextQuery{TaskID: tk.ID, RoundID: r.ID}); err != nil {
			t.Fatal(err)
		}
		must(t, s.BumpDailyCount(ctx, a.ID, tk.ID, "2026-01-01", 10))
		ex := e.submit(t, c, a, boolp(true))
		next, err := s.NextExampleToValidate(ctx, dynabench.ValidationQuery{TaskID: tk.ID, RoundID: r.ID, UserID: v.ID})
		must(t, err)
		if next.ID != ex.ID {
			t.Fatalf("next = %d, want %d", next.ID, ex.ID)
		}
		e.validate(t, ex.ID, v, dynabench.LabelCorrect, dynabench.ModeUser)
		for _, round := range []int64{0, r.ID} {
			got, err := s.AnnotatorStats(ctx, tk.ID, round, 10)
			must(t, err)
			if len(got) != 1 || got[0].UserID != a.ID {
				t.Fatalf("annotators of round %d: %+v", round, got)
			}
		}
		us, err := s.UserStats(ctx, v.ID)
		must(t, err)
		if us[tk.Code].Validations != 1 {
			t.Fatalf("user stats: %+v", us)
		}
		users, err := s.FindUsers(ctx, a.ID, 10)
		must(t, err)
		if len(users) != 1 || users[0].ID != v.ID {
			t.Fatalf("users after %d: %+v", a.ID, users)
		}
		e.noDrift(t)
	})
}
