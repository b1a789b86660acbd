package sqlstore_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dynabench-go/dynabench"
)

func TestContribution(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status string
		wrong  *bool
		want   dynabench.StatsDelta
	}{
		{dynabench.StatusPending, nil, dynabench.StatsDelta{Collected: 1}},
		{dynabench.StatusPending, boolp(false), dynabench.StatsDelta{Collected: 1}},
		{dynabench.StatusPending, boolp(true), dynabench.StatsDelta{Collected: 1, Fooled: 1}},
		{dynabench.StatusVerified, boolp(false), dynabench.StatsDelta{Collected: 1}},
		{dynabench.StatusVerified, boolp(true), dynabench.StatsDelta{Collected: 1, Fooled: 1, VerifiedFooled: 1}},
		{dynabench.StatusRejected, nil, dynabench.StatsDelta{Collected: 1, Rejected: 1}},
		{dynabench.StatusRejected, boolp(true), dynabench.StatsDelta{Collected: 1, Fooled: 1, Rejected: 1, RejectedFooled: 1}},
		{dynabench.StatusRetracted, boolp(true), dynabench.StatsDelta{Retracted: 1}},
		{dynabench.StatusRetracted, nil, dynabench.StatsDelta{Retracted: 1}},
	} {
		got := dynabench.Contribution(&dynabench.Example{Status: c.status, ModelWrong: c.wrong})
		if got != c.want {
			t.Errorf("Contribution(%s, wrong=%v) = %+v, want %+v", c.status, deref(c.wrong), got, c.want)
		}
	}
	a := dynabench.StatsDelta{Collected: 1, Fooled: 1, VerifiedFooled: 1, Rejected: 0, RejectedFooled: 0, Retracted: 0}
	b := dynabench.StatsDelta{Collected: 1, Fooled: 1, Rejected: 1, RejectedFooled: 1, Retracted: 2}
	if got, want := a.Sub(b), (dynabench.StatsDelta{VerifiedFooled: 1, Rejected: -1, RejectedFooled: -1, Retracted: -2}); got != want {
		t.Errorf("Sub = %+v, want %+v", got, want)
	}
	if !a.Sub(a).IsZero() || a.IsZero() {
		t.Error("IsZero")
	}
}

func TestApplyStats(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		u := e.user(t)
		tk := e.task(t)
		r := e.round(t, tk)
		c := e.contexts(t, r, 2, "")
		check := func(t *testing.T, want dynabench.RoundStats, used, fooled int64, user dynabench.AnnotatorStats) {
			t.Helper()
			got, err := s.FindRoundByID(ctx, r.ID)
			must(t, err)
			want.Rates()
			wantEqual(t, "round stats", got.Stats, want)
			cx, err := s.FindContextByID(ctx, c[0].ID)
			must(t, err)
			if cx.TotalUsed != used || cx.TotalFooled != fooled {
				t.Fatalf("context used/fooled = %d/%d, want %d/%d", cx.TotalUsed, cx.TotalFooled, used, fooled)
			}
			stats, err := s.UserStats(ctx, u.ID)
			must(t, err)
			user.UserID, user.Username = u.ID, u.Username
			wantEqual(t, "user stats", stats, map[string]dynabench.AnnotatorStats{tk.Code: user})
			e.noDrift(t)
		}

		fooling := e.submit(t, c[0], u, boolp(true))
		check(t, dynabench.RoundStats{Collected: 1, Fooled: 1}, 1, 1, dynabench.AnnotatorStats{Submitted: 1, Fooled: 1})
		right := e.submit(t, c[0], u, boolp(false))
		check(t, dynabench.RoundStats{Collected: 2, Fooled: 1}, 2, 1, dynabench.AnnotatorStats{Submitted: 2, Fooled: 1})
		e.setStatus(t, fooling.ID, dynabench.StatusVerified)
		check(t, dynabench.RoundStats{Collected: 2, Fooled: 1, VerifiedFooled: 1}, 2, 1,
			dynabench.AnnotatorStats{Submitted: 2, Fooled: 1, VerifiedFooled: 1})
		e.setStatus(t, right.ID, dynabench.StatusRejected)
		check(t, dynabench.RoundStats{Collected: 2, Fooled: 1, VerifiedFooled: 1, Rejected: 1}, 2, 1,
			dynabench.AnnotatorStats{Submitted: 2, Fooled: 1, VerifiedFooled: 1})
		e.setStatus(t, fooling.ID, dynabench.StatusRejected)
		check(t, dynabench.RoundStats{Collected: 2, Fooled: 1, Rejected: 2}, 2, 1,
			dynabench.AnnotatorStats{Submitted: 2, Fooled: 1, RejectedFooled: 1})
		e.setStatus(t, fooling.ID, dynabench.StatusRetracted)
		check(t, dynabench.RoundStats{Collected: 1, Rejected: 1}, 1, 0,
			dynabench.AnnotatorStats{Submitted: 1, RejectedFooled: 0, Retracted: 1})

		t.Run("errors", func(t *testing.T) {
			missing := &dynabench.Example{TaskID: tk.ID, RoundID: r.ID + 1000, ContextID: c[0].ID, UserID: u.ID}
			must(t, s.ApplyStats(ctx, missing, dynabench.StatsDelta{})) // nothing to do, nothing looked up
			wantCode(t, s.ApplyStats(ctx, missing, dynabench.StatsDelta{Collected: 1}), dynabench.ENOTFOUND)
			// Each miss below comes after the round's counters moved: the transaction must undo them.
			for name, ex := range map[string]*dynabench.Example{
				"context": {TaskID: tk.ID, RoundID: r.ID, ContextID: c[1].ID + 1000, UserID: u.ID},
				"user":    {TaskID: tk.ID, RoundID: r.ID, ContextID: c[1].ID, UserID: u.ID + 1000},
			} {
				err := s.InTx(ctx, func(tx dynabench.Store) error {
					return tx.ApplyStats(ctx, ex, dynabench.StatsDelta{Collected: 1, Fooled: 1})
				})
				if !dynabench.IsCode(err, dynabench.ENOTFOUND) {
					t.Errorf("unknown %s: %v, want not found", name, err)
				}
			}
			e.noDrift(t)
		})
	})
}

// TestCountersFollowContributions walks examples through random changes of status, model answer
// and votes, each applied as the rules do; the counters must always equal a recount and the sum
// of Contribution over the examples.
func TestCountersFollowContributions(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		rng := rand.New(rand.NewPCG(1, 2))
		users := []*dynabench.User{e.user(t), e.user(t), e.user(t)}
		tk := e.task(t)
		rounds := []*dynabench.Round{e.round(t, tk), e.round(t, tk)}
		var cs []*dynabench.Context
		for _, r := range rounds {
			cs = append(cs, e.contexts(t, r, 2, "")...)
		}
		wrongs := []*bool{nil, boolp(true), boolp(false)}
		statuses := []string{dynabench.StatusPending, dynabench.StatusVerified, dynabench.StatusRejected, dynabench.StatusRetracted}
		labels := []string{dynabench.LabelCorrect, dynabench.LabelIncorrect, dynabench.LabelFlagged}
		var exs []int64
		for range 12 {
			exs = append(exs, e.submit(t, cs[rng.IntN(len(cs))], users[rng.IntN(len(users))], wrongs[rng.IntN(3)]).ID)
		}
		for range 60 {
			id := exs[rng.IntN(len(exs))]
			switch rng.IntN(3) {
			case 0:
				e.setStatus(t, id, statuses[rng.IntN(4)])
			case 1:
				e.change(t, id, func(x *dynabench.Example) { x.ModelWrong = wrongs[rng.IntN(3)] })
			case 2:
				e.validate(t, id, e.user(t), labels[rng.IntN(3)], []string{dynabench.ModeUser, dynabench.ModeOwner}[rng.IntN(2)])
			}
		}
		e.noDrift(t)
		want := map[int64]dynabench.StatsDelta{}
		for _, id := range exs {
			ex, err := e.s.FindExampleByID(ctx, id)
			must(t, err)
			d := dynabench.Contribution(ex)
			w := want[ex.RoundID]
			w.Collected, w.Fooled, w.VerifiedFooled, w.Rejected = w.Collected+d.Collected, w.Fooled+d.Fooled, w.VerifiedFooled+d.VerifiedFooled, w.Rejected+d.Rejected
			want[ex.RoundID] = w
		}
		for _, r := range rounds {
			got, err := e.s.FindRoundByID(ctx, r.ID)
			must(t, err)
			w := want[r.ID]
			st := got.Stats
			if st.Collected != w.Collected || st.Fooled != w.Fooled || st.VerifiedFooled != w.VerifiedFooled || st.Rejected != w.Rejected {
				t.Errorf("round %d stats %+v, want sums of contributions %+v", r.Number, st, w)
			}
		}
	})
}

func TestBumpDailyCount(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		u, v := e.user(t), e.user(t)
		tk, other := e.task(t), e.task(t)
		stored := func(user, task int64, day string) int64 {
			return e.count(t, `SELECT coalesce(sum(n), 0) FROM daily_counts WHERE user_id = $1 AND task_id = $2 AND day = $3`, user, task, day)
		}
		const day = "2026-03-14"
		must(t, s.BumpDailyCount(ctx, u.ID, tk.ID, day, 2))
		must(t, s.BumpDailyCount(ctx, u.ID, tk.ID, day, 2))
		for range 3 {
			wantCode(t, s.BumpDailyCount(ctx, u.ID, tk.ID, day, 2), dynabench.ERATELIMIT)
		}
		if n := stored(u.ID, tk.ID, day); n != 2 {
			t.Fatalf("count after refusals = %d, want 2", n)
		}
		// The cap is per user, task and day.
		must(t, s.BumpDailyCount(ctx, u.ID, tk.ID, "2026-03-15", 2))
		must(t, s.BumpDailyCount(ctx, v.ID, tk.ID, day, 2))
		must(t, s.BumpDailyCount(ctx, u.ID, other.ID, day, 2))
		// A raised cap admits exactly the difference: the refusals were not counted.
		must(t, s.BumpDailyCount(ctx, u.ID, tk.ID, day, 3))
		wantCode(t, s.BumpDailyCount(ctx, u.ID, tk.ID, day, 3), dynabench.ERATELIMIT)
		// Refused inside a transaction that goes on to commit other work: still not counted.
		must(t, s.InTx(ctx, func(tx dynabench.Store) error {
			wantCode(t, tx.BumpDailyCount(ctx, u.ID, tk.ID, day, 3), dynabench.ERATELIMIT)
			return tx.BumpDailyCount(ctx, v.ID, tk.ID, day, 3)
		}))
		for _, c := range []struct {
			user, task int64
			day        string
			want       int64
		}{{u.ID, tk.ID, day, 3}, {u.ID, tk.ID, "2026-03-15", 1}, {v.ID, tk.ID, day, 2}, {u.ID, other.ID, day, 1}} {
			if n := stored(c.user, c.task, c.day); n != c.want {
				t.Errorf("count(%d, %d, %s) = %d, want %d", c.user, c.task, c.day, n, c.want)
			}
		}
		// max 0 means no cap.
		for range 5 {
			must(t, s.BumpDailyCount(ctx, v.ID, other.ID, day, 0))
		}
		if n := stored(v.ID, other.ID, day); n != 5 {
			t.Fatalf("uncapped count = %d, want 5", n)
		}
		wantCode(t, s.BumpDailyCount(ctx, v.ID+1000, tk.ID, day, 0), dynabench.ENOTFOUND)
		wantCode(t, s.BumpDailyCount(ctx, v.ID, other.ID+1000, day, 0), dynabench.ENOTFOUND)
	})
}

func TestAnnotatorAndUserStats(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		tk, tk2 := e.task(t), e.task(t)
		r1, r2, r3 := e.round(t, tk), e.round(t, tk), e.round(t, tk2)
		c1, c2, c3 := e.contexts(t, r1, 1, "")[0], e.contexts(t, r2, 1, "")[0], e.contexts(t, r3, 1, "")[0]
		u1, u2, u3, u4, u5, u6, v, x := e.user(t), e.user(t), e.user(t), e.user(t), e.user(t), e.user(t), e.user(t), e.user(t)
		// Counters as the rules would have left them (no example rows: this test is about the reads).
		apply := func(c *dynabench.Context, u *dynabench.User, d dynabench.StatsDelta) {
			must(t, s.ApplyStats(ctx, &dynabench.Example{TaskID: c.TaskID, RoundID: c.RoundID, ContextID: c.ID, UserID: u.ID}, d))
		}
		apply(c1, u1, dynabench.StatsDelta{Collected: 5, Fooled: 3, VerifiedFooled: 2})
		apply(c2, u1, dynabench.StatsDelta{Collected: 1})
		apply(c3, u1, dynabench.StatsDelta{Collected: 1, Fooled: 1})
		apply(c1, u2, dynabench.StatsDelta{Collected: 3, Fooled: 3, VerifiedFooled: 2})
		apply(c2, u3, dynabench.StatsDelta{Collected: 10, Fooled: 5, VerifiedFooled: 3, RejectedFooled: 1, Retracted: 2})
		apply(c1, u4, dynabench.StatsDelta{Collected: 4, Fooled: 4, VerifiedFooled: 2, RejectedFooled: 2})
		apply(c1, u5, dynabench.StatsDelta{Collected: 3, Fooled: 3, VerifiedFooled: 2}) // ties with u2: by id
		apply(c1, u6, dynabench.StatsDelta{Retracted: 1})                               // wrote nothing that counts
		apply(c3, x, dynabench.StatsDelta{Collected: 100, Fooled: 60, VerifiedFooled: 50})
		must(t, s.CountValidation(ctx, r1.ID, v.ID)) // validators who write nothing are not annotators
		must(t, s.CountValidation(ctx, r2.ID, v.ID))
		must(t, s.CountValidation(ctx, r1.ID, u1.ID))
		wantCode(t, s.CountValidation(ctx, r3.ID+1000, v.ID), dynabench.ENOTFOUND)
		wantCode(t, s.CountValidation(ctx, r1.ID, x.ID+1000), dynabench.ENOTFOUND)

		row := func(u *dynabench.User, sub, fooled, vf, rf, ret, val int64) dynabench.AnnotatorStats {
			return dynabench.AnnotatorStats{UserID: u.ID, Username: u.Username, Submitted: sub, Fooled: fooled,
				VerifiedFooled: vf, RejectedFooled: rf, Retracted: ret, Validations: val}
		}
		all := []dynabench.AnnotatorStats{row(u3, 10, 5, 3, 1, 2, 0), row(u1, 6, 3, 2, 0, 0, 1), row(u2, 3, 3, 2, 0, 0, 0),
			row(u5, 3, 3, 2, 0, 0, 0), row(u4, 4, 4, 2, 2, 0, 0)}
		for _, c := range []struct {
			round int64
			limit int
			want  []dynabench.AnnotatorStats
		}{
			{0, 100, all},
			{0, 2, all[:2]},
			{r1.ID, 100, []dynabench.AnnotatorStats{row(u1, 5, 3, 2, 0, 0, 1), row(u2, 3, 3, 2, 0, 0, 0), row(u5, 3, 3, 2, 0, 0, 0), row(u4, 4, 4, 2, 2, 0, 0)}},
			{r2.ID, 100, []dynabench.AnnotatorStats{row(u3, 10, 5, 3, 1, 2, 0), row(u1, 1, 0, 0, 0, 0, 0)}},
			{r3.ID, 100, []dynabench.AnnotatorStats{}}, // a round of another task
		} {
			got, err := s.AnnotatorStats(ctx, tk.ID, c.round, c.limit)
			must(t, err)
			wantEqual(t, fmt.Sprintf("annotators (round %d, limit %d)", c.round, c.limit), got, c.want)
		}
		got, err := s.AnnotatorStats(ctx, tk2.ID+1000, 0, 10)
		must(t, err)
		if got == nil || len(got) != 0 {
			t.Fatalf("annotators of no task = %#v, want empty", got)
		}

		for _, c := range []struct {
			user *dynabench.User
			want map[string]dynabench.AnnotatorStats
		}{
			{u1, map[string]dynabench.AnnotatorStats{tk.Code: row(u1, 6, 3, 2, 0, 0, 1), tk2.Code: row(u1, 1, 1, 0, 0, 0, 0)}},
			{v, map[string]dynabench.AnnotatorStats{tk.Code: row(v, 0, 0, 0, 0, 0, 2)}},
			{u6, map[string]dynabench.AnnotatorStats{tk.Code: row(u6, 0, 0, 0, 0, 1, 0)}},
			{&dynabench.User{ID: x.ID + 1000}, map[string]dynabench.AnnotatorStats{}},
		} {
			got, err := s.UserStats(ctx, c.user.ID)
			must(t, err)
			wantEqual(t, "user stats of "+c.user.Username, got, c.want)
		}
	})
}

func TestRecount(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		e.noDrift(t) // an empty database
		a, b, v := e.user(t), e.user(t), e.user(t)
		tk := e.task(t)
		r1, r2 := e.round(t, tk), e.round(t, tk)
		c1, c2 := e.contexts(t, r1, 1, "")[0], e.contexts(t, r2, 1, "")[0]
		x1 := e.submit(t, c1, a, boolp(true))
		x2 := e.submit(t, c1, b, boolp(false))
		x3 := e.submit(t, c2, a, boolp(true))
		e.submit(t, c2, b, nil)
		e.validate(t, x1.ID, v, dynabench.LabelCorrect, dynabench.ModeUser)
		e.validate(t, x1.ID, b, dynabench.LabelFlagged, dynabench.ModeUser)
		e.validate(t, x3.ID, v, dynabench.LabelIncorrect, dynabench.ModeOwner)
		e.setStatus(t, x1.ID, dynabench.StatusVerified)
		e.setStatus(t, x2.ID, dynabench.StatusRetracted)
		e.setStatus(t, x3.ID, dynabench.StatusRejected)
		e.noDrift(t)

		key := func(round, user int64) string { return fmt.Sprintf("%d/%d", round, user) }
		id := func(n int64) string { return fmt.Sprint(n) }
		// Stored values now: r1 collected 1 (x2 retracted); c2 total_fooled 1 (x3); round_users r2/a
		// retracted 0; r1/v validations 1; x1 n_flagged 1.
		e.exec(t, `UPDATE round_counts SET collected = collected + 3 WHERE round_id = $1 AND shard = (SELECT min(shard) FROM round_counts WHERE round_id = $1)`, r1.ID)
		e.exec(t, `UPDATE contexts SET total_fooled = total_fooled - 1 WHERE id = $1`, c2.ID)
		e.exec(t, `UPDATE round_users SET retracted = 7 WHERE round_id = $1 AND user_id = $2`, r2.ID, a.ID)
		e.exec(t, `UPDATE round_users SET validations = validations + 1 WHERE round_id = $1 AND user_id = $2`, r1.ID, v.ID)
		e.exec(t, `UPDATE examples SET n_flagged = 4 WHERE id = $1`, x1.ID)
		// A lost row: b's r1 row held submitted 0 (retracted), retracted 1 and validations 1.
		e.exec(t, `DELETE FROM round_users WHERE round_id = $1 AND user_id = $2`, r1.ID, b.ID)
		want := sortDrift([]dynabench.Drift{
			{Table: "rounds", Key: id(r1.ID), Counter: "collected", Stored: 4, Counted: 1},
			{Table: "contexts", Key: id(c2.ID), Counter: "total_fooled", Stored: 0, Counted: 1},
			{Table: "round_users", Key: key(r2.ID, a.ID), Counter: "retracted", Stored: 7, Counted: 0},
			{Table: "round_users", Key: key(r1.ID, v.ID), Counter: "validations", Stored: 2, Counted: 1},
			{Table: "examples", Key: id(x1.ID), Counter: "n_flagged", Stored: 4, Counted: 1},
			{Table: "round_users", Key: key(r1.ID, b.ID), Counter: "retracted", Stored: 0, Counted: 1},
			{Table: "round_users", Key: key(r1.ID, b.ID), Counter: "validations", Stored: 0, Counted: 1},
		})
		drift, err := s.Recount(ctx)
		must(t, err)
		wantEqual(t, "drift", sortDrift(drift), want)
		// Inside a transaction, the same answer.
		must(t, s.InTx(ctx, func(tx dynabench.Store) error {
			drift, err := tx.Recount(ctx)
			if err == nil {
				wantEqual(t, "drift in a transaction", sortDrift(drift), want)
			}
			return err
		}))
	})
}
