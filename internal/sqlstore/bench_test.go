package sqlstore_test

import (
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// BenchmarkCreateExampleTx measures the example-submit write path: one transaction with the daily
// cap, the example row and the counters, committed (durably: SQLite synchronous=FULL).
//
//	go test -run XXX -bench . -benchtime 2000x ./internal/sqlstore/
func BenchmarkCreateExampleTx(b *testing.B) {
	for _, engine := range sqlstoretest.Engines() {
		b.Run(engine, func(b *testing.B) {
			e := &env{engine: engine, db: sqlstoretest.Open(b, engine)}
			e.s = sqlstore.NewStore(e.db)
			u := e.user(b)
			tk := e.task(b)
			cs := e.contexts(b, e.round(b, tk), 16, "")
			input := map[string]any{"hypothesis": "A man is sleeping.", "label": "contradicts"}
			output := map[string]any{"label": "entailed", "prob": map[string]any{"entailed": 0.6, "neutral": 0.3, "contradicts": 0.1}}
			i := 0
			for b.Loop() {
				ex := &dynabench.Example{TaskID: tk.ID, RoundID: cs[0].RoundID, ContextID: cs[i%len(cs)].ID, UserID: u.ID,
					Input: input, ModelOutput: output, ModelName: "builtin", ModelWrong: boolp(i%3 == 0)}
				i++
				err := e.s.InTx(ctx, func(tx dynabench.Store) error {
					if err := tx.BumpDailyCount(ctx, u.ID, tk.ID, "2026-03-14", 0); err != nil {
						return err
					}
					if err := tx.CreateExample(ctx, ex); err != nil {
						return err
					}
					return tx.ApplyStats(ctx, ex, dynabench.Contribution(ex))
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
