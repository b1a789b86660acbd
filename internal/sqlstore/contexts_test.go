package sqlstore_test

import (
	"math"
	"testing"

	"github.com/dynabench-go/dynabench"
)

func TestContexts(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		tk := e.task(t)
		r := e.round(t, tk)
		countAll := func(t *testing.T) int64 { return e.count(t, `SELECT count(*) FROM contexts`) }

		cs := []*dynabench.Context{
			{TaskID: tk.ID, RoundID: r.ID, Tag: "news", Data: map[string]any{"context": "Ünïcode ✓ \"quoted\"\n", "n": 3.25,
				"list": []any{"a", 1.0, false, nil}, "obj": map[string]any{"deep": map[string]any{"x": "y"}}},
				Metadata: map[string]any{"source": "wiki", "ok": true}},
			{TaskID: tk.ID, RoundID: r.ID, Data: map[string]any{"context": "plain"}},
		}
		must(t, s.CreateContexts(ctx, cs))
		if cs[0].ID == 0 || cs[1].ID <= cs[0].ID || !cs[1].CreatedAt.Equal(millis(testNow)) {
			t.Fatalf("created: %+v %+v", cs[0], cs[1])
		}

		t.Run("find", func(t *testing.T) {
			want := *cs[0]
			want.CreatedAt = millis(testNow)
			got, err := s.FindContextByID(ctx, cs[0].ID)
			must(t, err)
			wantEqual(t, "context", got, &want)
			want = *cs[1]
			want.CreatedAt, want.Metadata = millis(testNow), map[string]any{}
			got, err = s.FindContextByID(ctx, cs[1].ID)
			must(t, err)
			wantEqual(t, "context without metadata", got, &want)
			_, err = s.FindContextByID(ctx, cs[1].ID+1000)
			wantCode(t, err, dynabench.ENOTFOUND)
		})

		t.Run("all or nothing", func(t *testing.T) {
			before := countAll(t)
			good := func() *dynabench.Context {
				return &dynabench.Context{TaskID: tk.ID, RoundID: r.ID, Data: map[string]any{"context": "ok"}}
			}
			// A reference miss in the middle: the first row was inserted and must be rolled back.
			batch := []*dynabench.Context{good(), {TaskID: tk.ID, RoundID: r.ID + 1000, Data: map[string]any{}}, good()}
			wantCode(t, s.CreateContexts(ctx, batch), dynabench.ENOTFOUND)
			// A row that cannot be encoded in the middle.
			batch = []*dynabench.Context{good(), {TaskID: tk.ID, RoundID: r.ID, Data: map[string]any{"x": math.NaN()}}, good()}
			if err := s.CreateContexts(ctx, batch); err == nil {
				t.Fatal("NaN in context data accepted")
			}
			if n := countAll(t); n != before {
				t.Fatalf("%d contexts after refused batches, want %d", n, before)
			}
			// Inside a caller's transaction the batch joins it: the caller's rollback undoes it.
			err := s.InTx(ctx, func(tx dynabench.Store) error {
				if err := tx.CreateContexts(ctx, []*dynabench.Context{good(), good()}); err != nil {
					return err
				}
				return dynabench.Errorf(dynabench.EINVALID, "changed my mind")
			})
			wantCode(t, err, dynabench.EINVALID)
			if n := countAll(t); n != before {
				t.Fatalf("%d contexts after a rolled-back transaction, want %d", n, before)
			}
			must(t, s.CreateContexts(ctx, nil))
		})
	})
}

// wantSpread picks 50 times per wanted context and fails unless exactly the wanted contexts come
// up, each at least 15 times. Ties are broken at random, so each is expected 50 times; with up to 7
// tied contexts the standard deviation is under 7, and 15 is more than 5 deviations out. A single
// wanted context needs only a few picks to show that nothing else comes up.
func wantSpread(t *testing.T, s dynabench.Store, q dynabench.ContextQuery, want ...*dynabench.Context) {
	t.Helper()
	n, min := 50*len(want), 15
	if len(want) == 1 {
		n, min = 15, 15
	}
	seen := map[int64]int{}
	for range n {
		c, err := s.PickContext(ctx, q)
		must(t, err)
		if c.RoundID != q.RoundID {
			t.Fatalf("picked context %d of round %d, asked for round %d", c.ID, c.RoundID, q.RoundID)
		}
		seen[c.ID]++
	}
	if len(seen) != len(want) {
		t.Fatalf("picked %v, want only %v", seen, ids(want, func(c *dynabench.Context) int64 { return c.ID }))
	}
	for _, c := range want {
		if seen[c.ID] < min {
			t.Fatalf("picked %v: context %d fewer than %d times", seen, c.ID, min)
		}
	}
}

func TestPickContext(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		tk := e.task(t)
		u := e.user(t)
		r := e.round(t, tk)
		other := e.round(t, tk) // its contexts must never be picked for r
		e.contexts(t, other, 3, "")
		e.contexts(t, other, 3, "news")
		cs := e.contexts(t, r, 4, "")
		news := e.contexts(t, r, 3, "news")
		q := func(strategy, tag string) dynabench.ContextQuery {
			return dynabench.ContextQuery{TaskID: tk.ID, RoundID: r.ID, Strategy: strategy, Tag: tag}
		}
		setCounters := func(c *dynabench.Context, used, fooled int) {
			e.exec(t, `UPDATE contexts SET total_used = $1, total_fooled = $2 WHERE id = $3`, used, fooled, c.ID)
		}
		// used/fooled: cs 3/0, 0/2, 0/1, 1/0; news 0/0 (tagged), 2/1, 5/0
		setCounters(cs[0], 3, 0)
		setCounters(cs[1], 0, 2)
		setCounters(cs[2], 0, 1)
		setCounters(cs[3], 1, 0)
		setCounters(news[1], 2, 1)
		setCounters(news[2], 5, 0)

		t.Run("least_used", func(t *testing.T) {
			wantSpread(t, s, q(dynabench.StrategyLeastUsed, ""), cs[1], cs[2], news[0])
			wantSpread(t, s, q("", "news"), news[0])
			wantSpread(t, s, q(dynabench.StrategyLeastUsed, "news"), news[0])
			setCounters(news[0], 9, 0)
			wantSpread(t, s, q(dynabench.StrategyLeastUsed, ""), cs[1], cs[2])
			wantSpread(t, s, q(dynabench.StrategyLeastUsed, "news"), news[1])
			setCounters(news[0], 0, 0)
		})
		t.Run("least_used follows ApplyStats", func(t *testing.T) {
			ex := e.submit(t, cs[1], u, boolp(false)) // cs[1] now used once: cs[2] and news[0] stay at 0
			wantSpread(t, s, q(dynabench.StrategyLeastUsed, ""), cs[2], news[0])
			e.setStatus(t, ex.ID, dynabench.StatusRetracted) // retracted examples do not count
			wantSpread(t, s, q(dynabench.StrategyLeastUsed, ""), cs[1], cs[2], news[0])
		})
		t.Run("uniform", func(t *testing.T) {
			// 7 contexts, 700 picks: 100 expected each, 9.3 standard deviation; 50 is far out.
			wantSpread(t, s, q(dynabench.StrategyUniform, ""), append(cs[:4:4], news...)...)
			wantSpread(t, s, q(dynabench.StrategyUniform, "news"), news...)
		})
		t.Run("least_fooled", func(t *testing.T) {
			wantSpread(t, s, q(dynabench.StrategyLeastFooled, ""), cs[0], cs[3], news[0], news[2])
			wantSpread(t, s, q(dynabench.StrategyLeastFooled, "news"), news[0], news[2])
		})
		t.Run("validation_failed", func(t *testing.T) {
			_, err := s.PickContext(ctx, q(dynabench.StrategyValidationFailed, ""))
			wantCode(t, err, dynabench.ENOTFOUND)
			// cs[0]: rejected + rejected → due.     cs[1]: rejected + pending → not yet.
			// cs[2]: rejected + verified → no.       cs[3]: rejected + retracted → due.
			// news[0]: only pending → no.            news[1]: rejected → due (tagged).
			with := func(c *dynabench.Context, statuses ...string) {
				for _, st := range statuses {
					ex := e.submit(t, c, u, boolp(true))
					if st != dynabench.StatusPending {
						e.setStatus(t, ex.ID, st)
					}
				}
			}
			with(cs[0], dynabench.StatusRejected, dynabench.StatusRejected)
			with(cs[1], dynabench.StatusRejected, dynabench.StatusPending)
			with(cs[2], dynabench.StatusRejected, dynabench.StatusVerified)
			with(cs[3], dynabench.StatusRejected, dynabench.StatusRetracted)
			with(news[0], dynabench.StatusPending)
			with(news[1], dynabench.StatusRejected)
			wantSpread(t, s, q(dynabench.StrategyValidationFailed, ""), cs[0], cs[3], news[1])
			wantSpread(t, s, q(dynabench.StrategyValidationFailed, "news"), news[1])
		})
		t.Run("none", func(t *testing.T) {
			empty := e.round(t, tk)
			for _, st := range []string{"", dynabench.StrategyLeastUsed, dynabench.StrategyUniform, dynabench.StrategyLeastFooled, dynabench.StrategyValidationFailed} {
				_, err := s.PickContext(ctx, dynabench.ContextQuery{TaskID: tk.ID, RoundID: empty.ID, Strategy: st})
				wantCode(t, err, dynabench.ENOTFOUND)
				_, err = s.PickContext(ctx, q(st, "no-such-tag"))
				wantCode(t, err, dynabench.ENOTFOUND)
			}
		})
		t.Run("unknown strategy", func(t *testing.T) {
			_, err := s.PickContext(ctx, q("most_used", ""))
			wantCode(t, err, dynabench.EINVALID)
		})
	})
}
