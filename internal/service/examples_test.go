package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dynabench-go/dynabench"
)

// TestCreateExampleModelAnswers: what the model in the loop answers decides model_wrong, and every
// kind of failure stores the example anyway with model_error and model_wrong null.
func TestCreateExampleModelAnswers(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{ModelTimeoutMS: 100}, nil)
		blocked := make(chan error, 10)
		huge := map[string]any{"label": "angry", "junk": strings.Repeat("j", 10000)}
		for _, tc := range []struct {
			name       string
			model      *fakeModel
			resolveErr error
			noModel    bool
			label      string
			wantWrong  *bool
			wantError  string // prefix of model_error; "" for none
			wantOutput map[string]any
		}{
			{name: "agrees", model: says(label("positive")), label: "positive", wantWrong: ptr(false), wantOutput: label("positive")},
			{name: "fooled", model: says(label("positive")), label: "negative", wantWrong: ptr(true), wantOutput: label("positive")},
			{name: "label padded with spaces", model: says(label(" negative ")), label: "negative", wantWrong: ptr(false)},
			{name: "extra output fields are dropped", model: says(map[string]any{"label": "neutral", "secret": "x"}), label: "neutral",
				wantWrong: ptr(false), wantOutput: label("neutral")},
			{name: "probabilities are kept", model: says(map[string]any{"label": "neutral",
				"prob": map[string]any{"positive": 0.25, "negative": 0.25, "neutral": 0.5}}), label: "positive", wantWrong: ptr(true),
				wantOutput: map[string]any{"label": "neutral", "prob": map[string]any{"positive": 0.25, "negative": 0.25, "neutral": 0.5}}},
			{name: "label outside the set", model: says(label("angry")), label: "positive", wantError: "invalid_answer: output.label",
				wantOutput: label("angry")},
			{name: "no label", model: says(map[string]any{"prob": map[string]any{"positive": 1}}), label: "positive", wantError: "invalid_answer: "},
			{name: "label of the wrong type", model: says(map[string]any{"label": 3}), label: "positive", wantError: "invalid_answer: "},
			{name: "empty answer", model: says(map[string]any{}), label: "positive", wantError: "invalid_answer: "},
			{name: "huge invalid answer is not kept", model: says(huge), label: "positive", wantError: "invalid_answer: ",
				wantOutput: map[string]any{"truncated": true}},
			{name: "plain error", model: &fakeModel{answer: func(context.Context, map[string]any) (map[string]any, error) {
				return nil, errors.New("connection refused")
			}}, label: "positive", wantError: "unreachable: connection refused"},
			{name: "bad status", model: &fakeModel{answer: func(context.Context, map[string]any) (map[string]any, error) {
				return nil, &dynabench.ModelError{Kind: dynabench.ModelBadStatus, Err: errors.New("HTTP 503")}
			}}, label: "positive", wantError: "bad_status: HTTP 503"},
			{name: "long error is cut", model: &fakeModel{answer: func(context.Context, map[string]any) (map[string]any, error) {
				return nil, errors.New(strings.Repeat("e", 1000))
			}}, label: "positive", wantError: "unreachable: " + strings.Repeat("e", 300) + "…"},
			{name: "error text is cut on a character boundary", model: &fakeModel{answer: func(context.Context, map[string]any) (map[string]any, error) {
				return nil, errors.New("x" + strings.Repeat("é", 400))
			}}, label: "positive", wantError: "unreachable: x" + strings.Repeat("é", 149) + "…"},
			{name: "error text with NUL and invalid UTF-8", model: &fakeModel{answer: func(context.Context, map[string]any) (map[string]any, error) {
				return nil, errors.New("bad\x00body\xff")
			}}, label: "positive", wantError: "unreachable: bad"},
			{name: "answer with a NUL", model: says(label("posi\x00tive")), label: "positive", wantError: "invalid_answer: "},
			{name: "answer with a NUL in a key", model: says(map[string]any{"label": "positive", "\x00": 1}), label: "positive",
				wantError: "invalid_answer: "},
			{name: "answer with invalid UTF-8", model: says(map[string]any{"label": "\xff"}), label: "positive", wantError: "invalid_answer: "},
			{name: "timeout", model: &fakeModel{answer: func(ctx context.Context, _ map[string]any) (map[string]any, error) {
				<-ctx.Done()
				blocked <- ctx.Err()
				return nil, ctx.Err()
			}}, label: "positive", wantError: "timeout: "},
			{name: "model cannot be resolved", model: says(label("positive")), resolveErr: &dynabench.ModelError{Kind: dynabench.ModelUnreachable,
				Err: errors.New("no adapter")}, label: "positive", wantError: "unreachable: no adapter"},
			{name: "no model in the loop", noModel: true, label: "positive", wantError: "no model in the loop"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := f.stats(t)
				if tc.noModel {
					f.setModels(t)
				} else {
					id := f.addModel(t, tc.model)
					if tc.resolveErr != nil {
						f.models.mu.Lock()
						f.models.errs[id] = tc.resolveErr
						f.models.mu.Unlock()
					}
					f.setModels(t, id)
				}
				statement := "Statement for " + tc.name
				e := f.create(t, "alice", 0, statement, tc.label)
				if !samePtr(e.ModelWrong, tc.wantWrong) {
					t.Errorf("model_wrong %s, want %s", show(e.ModelWrong), show(tc.wantWrong))
				}
				if tc.wantError == "" && e.ModelError != "" || !strings.HasPrefix(e.ModelError, tc.wantError) {
					t.Errorf("model_error %q, want prefix %q", e.ModelError, tc.wantError)
				}
				if tc.wantOutput != nil && fmt.Sprint(e.ModelOutput) != fmt.Sprint(tc.wantOutput) {
					t.Errorf("model output %v, want %v", e.ModelOutput, tc.wantOutput)
				}
				stored, err := f.store.FindExampleByID(context.Background(), e.ID)
				if err != nil {
					t.Fatal(err)
				}
				if strings.ContainsRune(stored.ModelError, 0) || !utf8.ValidString(stored.ModelError) {
					t.Errorf("stored model_error %q", stored.ModelError)
				}
				if stored.Input["statement"] != statement || stored.Input["label"] != tc.label || stored.ModelError != e.ModelError ||
					!samePtr(stored.ModelWrong, tc.wantWrong) || stored.Status != dynabench.StatusPending || stored.UserID != f.users["alice"].ID {
					t.Errorf("stored %+v", stored)
				}
				if tc.noModel != (stored.ModelID == nil) {
					t.Errorf("stored model id %v", stored.ModelID)
				}
				after := f.stats(t)
				fooled := int64(0)
				if tc.wantWrong != nil && *tc.wantWrong {
					fooled = 1
				}
				if after.Collected != before.Collected+1 || after.Fooled != before.Fooled+fooled {
					t.Errorf("stats went from %+v to %+v", before, after)
				}
				if tc.model != nil && tc.resolveErr == nil {
					if len(tc.model.inputs) != 1 {
						t.Fatalf("model asked %d times", len(tc.model.inputs))
					}
					// The model sees the context and the statement, never the annotator's label.
					in := tc.model.inputs[0]
					if in["statement"] != statement || in["context"] != "Context number 0." || in["label"] != nil {
						t.Errorf("the model was asked %v", in)
					}
					dl, ok := tc.model.ctxs[0].Deadline()
					if !ok || time.Until(dl) > 100*time.Millisecond {
						t.Errorf("the model's call has deadline %v (set %v), want within the task's 100 ms", dl, ok)
					}
				}
			})
		}
		select {
		case err := <-blocked:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("the blocked model's call ended with %v, want its deadline", err)
			}
		default:
			t.Errorf("the blocking model never returned")
		}
		f.noDrift(t)
	})
}

func samePtr(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(b *bool) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprint(*b)
}

// TestCreateExampleRandomModel: with several models in the loop each example asks one of them.
func TestCreateExampleRandomModel(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{}, nil)
		a, b := says(label("positive")), says(label("negative"))
		ida, idb := f.addModel(t, a), f.addModel(t, b)
		f.setModels(t, ida, idb)
		fooled := int64(0)
		for i := range 40 {
			e := f.create(t, "alice", i%3, fmt.Sprint("s", i), "positive")
			if e.ModelID == nil || (*e.ModelID == ida) != (e.ModelOutput["label"] == "positive") {
				t.Fatalf("example answered %v by model %v", e.ModelOutput, e.ModelID)
			}
			// The annotator says positive: only model b, which says negative, is fooled.
			if *e.ModelWrong != (*e.ModelID == idb) {
				t.Fatalf("model %d answered %v: model_wrong %v", *e.ModelID, e.ModelOutput, *e.ModelWrong)
			}
			if *e.ModelID == idb {
				fooled++
			}
		}
		if len(a.inputs)+len(b.inputs) != 40 || len(a.inputs) == 0 || len(b.inputs) == 0 {
			t.Errorf("model a asked %d times, b %d times", len(a.inputs), len(b.inputs))
		}
		f.wantStats(t, 40, fooled, 0, 0)
	})
}

func TestCreateExampleRefusals(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{}, says(label("positive")))
		ctx := context.Background()
		other, _, err := f.svc.CreateTask(ctx, f.admin, NewTask{Code: "other", Name: "Other", ConfigSource: testConfig})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.UploadContexts(ctx, f.admin, "other", 1, strings.NewReader(`{"context":{"context":"x"}}`)); err != nil {
			t.Fatal(err)
		}
		otherCtx, err := f.svc.PickContext(ctx, f.admin, "other", "", "")
		if err != nil {
			t.Fatal(err)
		}
		_ = other
		good := map[string]any{"statement": "s", "label": "positive"}
		for _, tc := range []struct {
			name      string
			actor     *dynabench.User
			code      string
			ne        NewExample
			wantCode  string
			wantField string
		}{
			{"anonymous", nil, "tk", NewExample{ContextID: f.contexts[0].ID, Input: good}, dynabench.EUNAUTHORIZED, ""},
			{"unknown task", f.users["alice"], "nope", NewExample{ContextID: f.contexts[0].ID, Input: good}, dynabench.ENOTFOUND, "code"},
			{"no context", f.users["alice"], "tk", NewExample{Input: good}, dynabench.EINVALID, "context_id"},
			{"unknown context", f.users["alice"], "tk", NewExample{ContextID: 1 << 40, Input: good}, dynabench.EINVALID, "context_id"},
			{"context of another task", f.users["alice"], "tk", NewExample{ContextID: otherCtx.ID, Input: good}, dynabench.EINVALID, "context_id"},
			{"label outside the set", f.users["alice"], "tk", NewExample{ContextID: f.contexts[0].ID,
				Input: map[string]any{"statement": "s", "label": "angry"}}, dynabench.EINVALID, "input.label"},
			{"nil input", f.users["alice"], "tk", NewExample{ContextID: f.contexts[0].ID}, dynabench.EINVALID, "input.statement"},
			{"metadata not in the config", f.users["alice"], "tk", NewExample{ContextID: f.contexts[0].ID, Input: good,
				Metadata: map[string]any{"x": 1}}, dynabench.EINVALID, "metadata.x"},
			{"tag too long", f.users["alice"], "tk", NewExample{ContextID: f.contexts[0].ID, Input: good, Tag: strings.Repeat("t", 101)},
				dynabench.EINVALID, "tag"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := f.svc.CreateExample(ctx, tc.actor, tc.code, tc.ne)
				wantCode(t, err, tc.wantCode)
				var de *dynabench.Error
				if errors.As(err, &de) && de.Field != tc.wantField {
					t.Errorf("field %q, want %q", de.Field, tc.wantField)
				}
			})
		}
		// A closed round takes no more examples, even on its own contexts.
		if _, err := f.svc.NextRound(ctx, f.admin, "tk", nil, ""); err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.CreateExample(ctx, f.users["alice"], "tk", NewExample{ContextID: f.contexts[0].ID, Input: good})
		wantCode(t, err, dynabench.EINVALID)
		f.wantStats(t, 0, 0, 0, 0)
	})
}

// TestSandboxAndDailyCap: sandbox examples are answered but neither stored nor counted against the
// daily cap; the cap is per user, task and UTC day, and a refused example moves no counter.
func TestSandboxAndDailyCap(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{MaxExamplesPerDay: 2}, says(label("positive")))
		ctx := context.Background()
		alice := f.users["alice"]
		for range 3 {
			e, err := f.svc.CreateExample(ctx, alice, "tk", NewExample{ContextID: f.contexts[0].ID, Sandbox: true,
				Input: map[string]any{"statement": "s", "label": "negative"}})
			if err != nil {
				t.Fatal(err)
			}
			if e.ID != 0 || e.ModelWrong == nil || !*e.ModelWrong {
				t.Errorf("sandbox example %+v", e)
			}
		}
		f.wantStats(t, 0, 0, 0, 0)
		f.create(t, "alice", 0, "one", "negative")
		f.create(t, "alice", 1, "two", "positive")
		_, err := f.svc.CreateExample(ctx, alice, "tk", NewExample{ContextID: f.contexts[2].ID, Input: map[string]any{"statement": "three", "label": "negative"}})
		wantCode(t, err, dynabench.ERATELIMIT)
		f.create(t, "bob", 2, "bob's", "negative")
		f.wantStats(t, 3, 2, 0, 0)
		f.advance(2 * time.Hour) // past midnight UTC
		f.create(t, "alice", 2, "three, the next day", "negative")
		f.wantStats(t, 4, 3, 0, 0)
	})
}

func TestUpdateRetractFlag(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{}, says(label("positive")))
		ctx := context.Background()
		alice, bob := f.users["alice"], f.users["bob"]
		fooling := f.create(t, "alice", 0, "fooling", "negative")
		plain := f.create(t, "alice", 1, "plain", "positive")
		f.wantStats(t, 2, 1, 0, 0)

		_, err := f.svc.UpdateExample(ctx, alice, fooling.ID, ExamplePatch{ModelWrong: ptr(false)})
		wantCode(t, err, dynabench.EINVALID) // exact_match decides, not the annotator
		_, err = f.svc.UpdateExample(ctx, bob, fooling.ID, ExamplePatch{Metadata: map[string]any{"model_explanation_wrong": "x"}})
		wantCode(t, err, dynabench.ENOTFOUND)
		_, err = f.svc.UpdateExample(ctx, alice, plain.ID, ExamplePatch{Metadata: map[string]any{"model_explanation_wrong": "x"}})
		wantCode(t, err, dynabench.EINVALID) // only asked when the model was fooled
		e, err := f.svc.UpdateExample(ctx, alice, fooling.ID, ExamplePatch{Metadata: map[string]any{"model_explanation_wrong": "irony"}})
		wantCode(t, err, "")
		if e.Metadata["model_explanation_wrong"] != "irony" {
			t.Errorf("metadata %v", e.Metadata)
		}

		_, err = f.svc.FlagExample(ctx, alice, plain.ID, strings.Repeat("r", 2001))
		wantCode(t, err, dynabench.EINVALID)
		e, err = f.svc.FlagExample(ctx, alice, plain.ID, "typo")
		wantCode(t, err, "")
		if !e.Flagged || e.FlagReason != "typo" {
			t.Errorf("flag: %+v", e)
		}
		f.wantStats(t, 2, 1, 0, 0) // flags and explanations move no counter

		_, err = f.svc.RetractExample(ctx, bob, fooling.ID)
		wantCode(t, err, dynabench.ENOTFOUND)
		_, err = f.svc.RetractExample(ctx, alice, fooling.ID)
		wantCode(t, err, "")
		f.wantStats(t, 1, 0, 0, 0)
		_, err = f.svc.RetractExample(ctx, alice, fooling.ID)
		wantCode(t, err, dynabench.ECONFLICT)
		_, err = f.svc.UpdateExample(ctx, alice, fooling.ID, ExamplePatch{Metadata: map[string]any{"model_explanation_wrong": "y"}})
		wantCode(t, err, dynabench.ECONFLICT)
		_, err = f.svc.RetractExample(ctx, nil, plain.ID)
		wantCode(t, err, dynabench.EUNAUTHORIZED)
		_, err = f.svc.RetractExample(ctx, alice, 1<<40)
		wantCode(t, err, dynabench.ENOTFOUND)

		us, err := f.store.UserStats(ctx, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := us["tk"]; got.Submitted != 1 || got.Fooled != 0 || got.Retracted != 1 {
			t.Errorf("alice's stats %+v", got)
		}
	})
}

// TestRescore: an example whose model failed is asked again; concurrent rescores count once.
func TestRescore(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{}, nil)
		ctx := context.Background()
		down := f.addModel(t, &fakeModel{answer: func(context.Context, map[string]any) (map[string]any, error) {
			return nil, errors.New("down")
		}})
		f.setModels(t, down)
		const n = 8
		var failed []*dynabench.Example
		for i := range n {
			failed = append(failed, f.create(t, "alice", i%3, fmt.Sprint("failed ", i), "negative"))
		}
		f.wantStats(t, n, 0, 0, 0)

		// Still down: the error is refreshed, nothing else moves.
		e, err := f.svc.RescoreExample(ctx, f.users["alice"], failed[0].ID)
		wantCode(t, err, "")
		if e.ModelError == "" || e.ModelWrong != nil {
			t.Errorf("rescored against a model that is down: %+v", e)
		}
		f.setModels(t, f.addModel(t, says(label("positive"))))
		_, err = f.svc.RescoreExample(ctx, f.users["bob"], failed[0].ID)
		wantCode(t, err, dynabench.ENOTFOUND)
		if _, err := f.svc.RetractExample(ctx, f.users["alice"], failed[1].ID); err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.RescoreExample(ctx, f.users["alice"], failed[1].ID)
		wantCode(t, err, dynabench.ECONFLICT)

		for _, ex := range failed[2:] {
			var wg sync.WaitGroup
			results := make([]error, 3)
			for j := range results {
				wg.Add(1)
				go func() {
					defer wg.Done()
					actor := f.users["alice"]
					if j == 2 {
						actor = f.admin // an owner may rescore too
					}
					_, results[j] = f.svc.RescoreExample(ctx, actor, ex.ID)
				}()
			}
			wg.Wait()
			ok := 0
			for _, err := range results {
				if err == nil {
					ok++
				} else if !dynabench.IsCode(err, dynabench.ECONFLICT) {
					t.Errorf("rescore: %v", err)
				}
			}
			if ok != 1 {
				t.Errorf("example %d: %d concurrent rescores succeeded, want 1", ex.ID, ok)
			}
			stored, _ := f.store.FindExampleByID(ctx, ex.ID)
			if stored.ModelError != "" || stored.ModelWrong == nil || !*stored.ModelWrong {
				t.Errorf("example %d after rescore: %+v", ex.ID, stored)
			}
		}
		_, err = f.svc.RescoreExample(ctx, f.admin, failed[0].ID)
		wantCode(t, err, "")
		_, err = f.svc.RescoreExample(ctx, f.admin, failed[0].ID)
		wantCode(t, err, dynabench.ECONFLICT)
		// failed[1] was retracted; the other seven now fool the model.
		f.wantStats(t, n-1, n-1, 0, 0)
	})
}
