package sqlstore_test

import (
	"testing"

	"github.com/dynabench-go/dynabench"
)

func TestExamples(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		u := e.user(t)
		tk := e.task(t)
		m := e.model(t, tk.ID, u.ID)
		e.round(t, tk)
		r := e.round(t, tk) // round 2, so RoundNumber is not trivially 1
		c := e.contexts(t, r, 1, "")[0]

		full := &dynabench.Example{TaskID: tk.ID, RoundID: r.ID, ContextID: c.ID, UserID: u.ID,
			Input:   map[string]any{"hypothesis": "Ünïcode ✓", "n": 2.5, "spans": []any{map[string]any{"start": 1.0, "end": 4.0}}},
			ModelID: &m.ID, ModelName: "roberta", ModelOutput: map[string]any{"label": "entailed", "prob": map[string]any{"entailed": 0.75}},
			ModelWrong: boolp(true), ModelError: "", Status: dynabench.StatusPending, Flagged: true, FlagReason: "offensive",
			Metadata: map[string]any{"explanation": "why", "timer": 12.0}, Tag: "news"}
		must(t, s.CreateExample(ctx, full))
		if full.ID == 0 || !full.CreatedAt.Equal(millis(testNow)) {
			t.Fatalf("created: %+v", full)
		}
		wantFull := *full
		wantFull.RoundNumber, wantFull.CreatedAt = 2, millis(testNow)

		// The model failed: no model answer, no model id, and the default status.
		failed := &dynabench.Example{TaskID: tk.ID, RoundID: r.ID, ContextID: c.ID, UserID: u.ID,
			Input: map[string]any{"hypothesis": "x"}, ModelError: "model timeout: deadline exceeded"}
		must(t, s.CreateExample(ctx, failed))
		if failed.Status != dynabench.StatusPending {
			t.Fatalf("default status %q, want %q", failed.Status, dynabench.StatusPending)
		}
		wantFailed := *failed
		wantFailed.RoundNumber, wantFailed.CreatedAt = 2, millis(testNow)
		wantFailed.ModelOutput, wantFailed.Metadata = map[string]any{}, map[string]any{}

		// The model was right: ModelWrong false is not the same as unknown.
		right := &dynabench.Example{TaskID: tk.ID, RoundID: r.ID, ContextID: c.ID, UserID: u.ID, Input: map[string]any{}, ModelWrong: boolp(false)}
		must(t, s.CreateExample(ctx, right))

		t.Run("find", func(t *testing.T) {
			got, err := s.FindExampleByID(ctx, full.ID)
			must(t, err)
			wantEqual(t, "full example", got, &wantFull)
			got, err = s.FindExampleByID(ctx, failed.ID)
			must(t, err)
			wantEqual(t, "failed-model example", got, &wantFailed)
			got, err = s.FindExampleByID(ctx, right.ID)
			must(t, err)
			if got.ModelWrong == nil || *got.ModelWrong || got.ModelID != nil {
				t.Fatalf("model_wrong %v model_id %v, want false and nil", got.ModelWrong, got.ModelID)
			}
			_, err = s.FindExampleByID(ctx, right.ID+1000)
			wantCode(t, err, dynabench.ENOTFOUND)
		})

		t.Run("lock", func(t *testing.T) {
			got, err := s.LockExample(ctx, full.ID)
			must(t, err)
			wantEqual(t, "locked outside a transaction", got, &wantFull)
			must(t, s.InTx(ctx, func(tx dynabench.Store) error {
				got, err := tx.LockExample(ctx, full.ID)
				if err != nil {
					return err
				}
				wantEqual(t, "locked in a transaction", got, &wantFull)
				_, err = tx.LockExample(ctx, full.ID+1000)
				wantCode(t, err, dynabench.ENOTFOUND)
				return nil
			}))
			_, err = s.LockExample(ctx, full.ID+1000)
			wantCode(t, err, dynabench.ENOTFOUND)
		})

		t.Run("references", func(t *testing.T) {
			for name, edit := range map[string]func(*dynabench.Example){
				"context": func(x *dynabench.Example) { x.ContextID += 1000 },
				"user":    func(x *dynabench.Example) { x.UserID += 1000 },
				"round":   func(x *dynabench.Example) { x.RoundID += 1000 },
				"task":    func(x *dynabench.Example) { x.TaskID += 1000 },
				"model":   func(x *dynabench.Example) { x.ModelID = int64p(m.ID + 1000) },
			} {
				x := &dynabench.Example{TaskID: tk.ID, RoundID: r.ID, ContextID: c.ID, UserID: u.ID, Input: map[string]any{}}
				edit(x)
				if err := s.CreateExample(ctx, x); !dynabench.IsCode(err, dynabench.ENOTFOUND) {
					t.Errorf("unknown %s: error %v, want not found", name, err)
				}
			}
		})

		t.Run("update", func(t *testing.T) {
			// The answer arrives for the failed example; immutable fields given here must not change.
			upd := wantFailed
			upd.ModelID, upd.ModelName, upd.ModelOutput = &m.ID, "roberta", map[string]any{"label": "neutral"}
			upd.ModelWrong, upd.ModelError, upd.Status = boolp(false), "", dynabench.StatusVerified
			upd.Flagged, upd.FlagReason, upd.Metadata = true, "spam", map[string]any{"k": "v"}
			upd.Counts = dynabench.ValidationCounts{Correct: 3, Incorrect: 2, Flagged: 1}
			must(t, s.UpdateExample(ctx, &upd))
			want := upd
			upd.Input, upd.Tag, upd.UserID = map[string]any{"changed": true}, "changed", u.ID+1
			must(t, s.UpdateExample(ctx, &upd))
			got, err := s.FindExampleByID(ctx, failed.ID)
			must(t, err)
			wantEqual(t, "updated", got, &want)
			// And back to unknown.
			upd.ModelID, upd.ModelWrong = nil, nil
			must(t, s.UpdateExample(ctx, &upd))
			got, err = s.FindExampleByID(ctx, failed.ID)
			must(t, err)
			if got.ModelID != nil || got.ModelWrong != nil {
				t.Fatalf("model id %v wrong %v, want nil", got.ModelID, got.ModelWrong)
			}
			upd.ID += 1000
			wantCode(t, s.UpdateExample(ctx, &upd), dynabench.ENOTFOUND)
			got, err = s.FindExampleByID(ctx, full.ID)
			must(t, err)
			wantEqual(t, "untouched example", got, &wantFull)
		})
	})
}

func TestValidations(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		author, v1, v2 := e.user(t), e.user(t), e.user(t)
		tk := e.task(t)
		r := e.round(t, tk)
		c := e.contexts(t, r, 1, "")[0]
		ex := e.submit(t, c, author, boolp(true))
		quiet := e.submit(t, c, author, boolp(true))

		a := &dynabench.Validation{ExampleID: ex.ID, UserID: v1.ID, Label: dynabench.LabelIncorrect, Mode: dynabench.ModeUser,
			Metadata: map[string]any{"reason": "label is wrong", "confidence": 0.5}}
		must(t, s.CreateValidation(ctx, a))
		if a.ID == 0 || !a.CreatedAt.Equal(millis(testNow)) {
			t.Fatalf("created: %+v", a)
		}
		b := &dynabench.Validation{ExampleID: ex.ID, UserID: v2.ID, Label: dynabench.LabelFlagged, Mode: dynabench.ModeUser}
		must(t, s.CreateValidation(ctx, b))
		// The same user in the other mode is a different vote.
		o := &dynabench.Validation{ExampleID: ex.ID, UserID: v1.ID, Label: dynabench.LabelCorrect, Mode: dynabench.ModeOwner}
		must(t, s.CreateValidation(ctx, o))

		wantA, wantB, wantO := *a, *b, *o
		wantA.CreatedAt, wantB.CreatedAt, wantO.CreatedAt = millis(testNow), millis(testNow), millis(testNow)
		wantB.Metadata, wantO.Metadata = map[string]any{}, map[string]any{}
		got, err := s.FindValidations(ctx, ex.ID)
		must(t, err)
		wantEqual(t, "validations in order", got, []*dynabench.Validation{&wantA, &wantB, &wantO})
		got, err = s.FindValidations(ctx, quiet.ID)
		must(t, err)
		if len(got) != 0 {
			t.Fatalf("validations of an unvalidated example: %v", got)
		}

		second := &dynabench.Validation{ExampleID: ex.ID, UserID: v1.ID, Label: dynabench.LabelCorrect, Mode: dynabench.ModeUser}
		wantCode(t, s.CreateValidation(ctx, second), dynabench.ECONFLICT)
		wantCode(t, s.CreateValidation(ctx, &dynabench.Validation{ExampleID: ex.ID + 1000, UserID: v1.ID, Label: "correct", Mode: "user"}), dynabench.ENOTFOUND)
		wantCode(t, s.CreateValidation(ctx, &dynabench.Validation{ExampleID: ex.ID, UserID: v2.ID + 1000, Label: "correct", Mode: "user"}), dynabench.ENOTFOUND)
		got, err = s.FindValidations(ctx, ex.ID)
		must(t, err)
		if len(got) != 3 {
			t.Fatalf("%d validations after refused ones, want 3", len(got))
		}
	})
}

func TestNextExampleToValidate(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		a, b, v := e.user(t), e.user(t), e.user(t)
		tk := e.task(t)
		r := e.round(t, tk)
		other := e.round(t, tk)
		c := e.contexts(t, r, 1, "")[0]
		oc := e.contexts(t, other, 1, "")[0]
		labels := []string{dynabench.LabelCorrect, dynabench.LabelFlagged}
		withVotes := func(ex *dynabench.Example, n int) { // by other users, so v's queue is unaffected
			for i := range n {
				e.validate(t, ex.ID, e.user(t), labels[i%2], dynabench.ModeUser)
			}
		}

		own := e.submit(t, c, v, boolp(true))         // v's own: never served to v
		notFooling := e.submit(t, c, a, boolp(false)) // only when non-fooling examples are asked for
		twoVotes := e.submit(t, c, a, boolp(true))
		withVotes(twoVotes, 2)
		oneVoteB := e.submit(t, c, b, boolp(true))
		withVotes(oneVoteB, 1)
		oneVoteA := e.submit(t, c, a, boolp(true)) // ties with oneVoteB on votes; higher id
		withVotes(oneVoteA, 1)
		// Never due: resolved, retracted, answer unknown, other round.
		e.setStatus(t, e.submit(t, c, a, boolp(true)).ID, dynabench.StatusVerified)
		e.setStatus(t, e.submit(t, c, a, boolp(true)).ID, dynabench.StatusRejected)
		e.setStatus(t, e.submit(t, c, a, boolp(true)).ID, dynabench.StatusRetracted)
		e.submit(t, c, a, nil)
		e.submit(t, oc, a, boolp(true))

		next := func(u *dynabench.User, nonFooling bool) int64 {
			t.Helper()
			ex, err := s.NextExampleToValidate(ctx, dynabench.ValidationQuery{TaskID: tk.ID, RoundID: r.ID, UserID: u.ID, NonFooling: nonFooling})
			if dynabench.IsCode(err, dynabench.ENOTFOUND) {
				return 0
			}
			must(t, err)
			if ex.Status != dynabench.StatusPending || ex.UserID == u.ID || ex.RoundID != r.ID || ex.ModelWrong == nil {
				t.Fatalf("served %+v to user %d", ex, u.ID)
			}
			return ex.ID
		}

		// Fooling first, fewest votes first, then by id; each vote takes the example off v's queue.
		var order []int64
		for id := next(v, false); id != 0; id = next(v, false) {
			order = append(order, id)
			e.validate(t, id, v, dynabench.LabelCorrect, dynabench.ModeUser)
		}
		wantEqual(t, "queue of v", order, []int64{oneVoteB.ID, oneVoteA.ID, twoVotes.ID})
		// Asking for non-fooling examples too keeps fooling ones first (a has not voted yet).
		if got := next(a, true); got != own.ID {
			t.Fatalf("a with non-fooling: got %d, want the fooling example %d", got, own.ID)
		}
		if got := next(v, true); got != notFooling.ID {
			t.Fatalf("v with non-fooling: got %d, want %d", got, notFooling.ID)
		}
		// A vote in owner mode counts as having validated it too.
		e.validate(t, notFooling.ID, v, dynabench.LabelCorrect, dynabench.ModeOwner)
		if got := next(v, true); got != 0 {
			t.Fatalf("v's queue should be empty, got %d", got)
		}
		// a never gets its own examples: only v's and b's.
		if got := next(a, false); got != own.ID {
			t.Fatalf("a: got %d, want %d", got, own.ID)
		}
		e.validate(t, own.ID, a, dynabench.LabelIncorrect, dynabench.ModeUser)
		if got := next(a, false); got != oneVoteB.ID {
			t.Fatalf("a: got %d, want %d", got, oneVoteB.ID)
		}
		e.validate(t, oneVoteB.ID, a, dynabench.LabelIncorrect, dynabench.ModeUser)
		if got := next(a, true); got != 0 {
			t.Fatalf("a's queue should be empty, got %d", got)
		}
		e.noDrift(t)
	})
}
