package sqlstore_test

import (
	"testing"

	"github.com/dynabench-go/dynabench"
)

func TestFindExamples(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		u := e.user(t)
		tk, other := e.task(t), e.task(t)
		r1, r2 := e.round(t, tk), e.round(t, tk)
		c1, c2 := e.contexts(t, r1, 1, "")[0], e.contexts(t, r2, 1, "")[0]
		oc := e.contexts(t, e.round(t, other), 1, "")[0]

		// Round 1: verified, pending, verified, rejected; round 2: verified, retracted; the other task: verified.
		var verified1, verified2 []int64
		for i, status := range []string{dynabench.StatusVerified, dynabench.StatusPending, dynabench.StatusVerified, dynabench.StatusRejected} {
			ex := e.submit(t, c1, u, boolp(i%2 == 0))
			if status != dynabench.StatusPending {
				e.setStatus(t, ex.ID, status)
			}
			if status == dynabench.StatusVerified {
				verified1 = append(verified1, ex.ID)
			}
		}
		ex := e.submit(t, c2, u, boolp(true))
		e.setStatus(t, ex.ID, dynabench.StatusVerified)
		verified2 = append(verified2, ex.ID)
		e.setStatus(t, e.submit(t, c2, u, boolp(false)).ID, dynabench.StatusRetracted)
		e.setStatus(t, e.submit(t, oc, u, boolp(true)).ID, dynabench.StatusVerified)

		find := func(f dynabench.ExampleFilter) []*dynabench.Example {
			t.Helper()
			got, err := e.s.FindExamples(ctx, f)
			must(t, err)
			return got
		}
		exID := func(x *dynabench.Example) int64 { return x.ID }

		all := find(dynabench.ExampleFilter{TaskID: tk.ID})
		if len(all) != 6 {
			t.Fatalf("all of the task's examples: %d, want 6", len(all))
		}
		wantEqual(t, "verified in round 1", ids(find(dynabench.ExampleFilter{TaskID: tk.ID, RoundIDs: []int64{r1.ID},
			Status: dynabench.StatusVerified}), exID), verified1)
		both := find(dynabench.ExampleFilter{TaskID: tk.ID, RoundIDs: []int64{r2.ID, r1.ID}, Status: dynabench.StatusVerified})
		wantEqual(t, "verified in rounds 1 and 2", ids(both, exID), append(append([]int64{}, verified1...), verified2...))
		if both[2].RoundNumber != 2 || both[2].ContextID != c2.ID || both[0].Input["hypothesis"] == nil {
			t.Fatalf("example fields not filled: %+v", both[2])
		}
		// A round of another task selects nothing of this one.
		if got := find(dynabench.ExampleFilter{TaskID: tk.ID, RoundIDs: []int64{oc.RoundID}}); len(got) != 0 {
			t.Fatalf("another task's round: %d examples", len(got))
		}

		// Paging: two at a time, resuming after the last id, gives the same list as one page.
		var paged []int64
		after := int64(0)
		for range 10 {
			page := find(dynabench.ExampleFilter{TaskID: tk.ID, AfterID: after, Limit: 2})
			if len(page) == 0 {
				break
			}
			if len(page) > 2 {
				t.Fatalf("page of %d, limit 2", len(page))
			}
			paged = append(paged, ids(page, exID)...)
			after = page[len(page)-1].ID
		}
		wantEqual(t, "paged ids", paged, ids(all, exID))

		_, err := e.s.FindExamples(ctx, dynabench.ExampleFilter{TaskID: tk.ID, Limit: -1})
		wantCode(t, err, dynabench.EINVALID)
		_, err = e.s.FindExamples(ctx, dynabench.ExampleFilter{TaskID: tk.ID, Limit: dynabench.MaxExamplesPage + 1})
		wantCode(t, err, dynabench.EINVALID)
		_, err = e.s.FindExamples(ctx, dynabench.ExampleFilter{TaskID: tk.ID, RoundIDs: make([]int64, dynabench.MaxExampleFilterRounds+1)})
		wantCode(t, err, dynabench.EINVALID)
	})
}

func TestModelArtifacts(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		u := e.user(t)
		tk := e.task(t)
		m, bare := e.model(t, tk.ID, u.ID), e.model(t, tk.ID, u.ID)
		a := &dynabench.ModelArtifact{ModelID: m.ID, BlobKey: "models/ab12.dbm", Size: 12345, SHA256: "ab12",
			Manifest: map[string]any{"kind": "classifier", "heldout": map[string]any{"accuracy": 0.75}, "train_rows": 90.0}}
		must(t, e.s.CreateModelArtifact(ctx, a))
		if !a.CreatedAt.Equal(millis(testNow)) {
			t.Fatalf("created at %v", a.CreatedAt)
		}
		got, err := e.s.FindModelArtifact(ctx, m.ID)
		must(t, err)
		wantEqual(t, "artifact", got, a)

		// Immutable: a second artifact for the model is a conflict, and the first is kept.
		err = e.s.CreateModelArtifact(ctx, &dynabench.ModelArtifact{ModelID: m.ID, BlobKey: "other", SHA256: "cd"})
		wantCode(t, err, dynabench.ECONFLICT)
		got, err = e.s.FindModelArtifact(ctx, m.ID)
		must(t, err)
		wantEqual(t, "artifact after conflict", got, a)

		_, err = e.s.FindModelArtifact(ctx, bare.ID)
		wantCode(t, err, dynabench.ENOTFOUND)
		err = e.s.CreateModelArtifact(ctx, &dynabench.ModelArtifact{ModelID: bare.ID + 1000, BlobKey: "k", SHA256: "x"})
		wantCode(t, err, dynabench.ENOTFOUND)

		// Registering a model and its artifact is one transaction: a failure keeps neither.
		var created *dynabench.Model
		err = e.s.InTx(ctx, func(tx dynabench.Store) error {
			created = &dynabench.Model{TaskID: tk.ID, UserID: u.ID, Name: "retrained", Kind: dynabench.KindBuiltin}
			if err := tx.CreateModel(ctx, created); err != nil {
				return err
			}
			if err := tx.CreateModelArtifact(ctx, &dynabench.ModelArtifact{ModelID: created.ID, BlobKey: "k2", SHA256: "y"}); err != nil {
				return err
			}
			return tx.CreateModelArtifact(ctx, &dynabench.ModelArtifact{ModelID: created.ID, BlobKey: "k3", SHA256: "z"})
		})
		wantCode(t, err, dynabench.ECONFLICT)
		_, err = e.s.FindModelByID(ctx, created.ID)
		wantCode(t, err, dynabench.ENOTFOUND)
		if n := e.count(t, `SELECT COUNT(*) FROM model_artifacts`); n != 1 {
			t.Fatalf("%d artifact rows after the rolled-back registration, want 1", n)
		}
	})
}
