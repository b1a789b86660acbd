package ensemble_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/ensemble"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

var nli = spec.Spec{Kind: spec.Classification, Labels: []string{"entailed", "neutral", "contradictory"},
	LabelField: "label", ProbField: "prob", TextFields: []string{"context", "hypothesis"}}

var qa = spec.Spec{Kind: spec.ExtractiveQA, AnswerField: "answer", ConfField: "conf", ContextField: "context",
	QuestionField: "question"}

// fixed is a predictor that always answers out (or fails with err), counting its calls.
type fixed struct {
	out   map[string]any
	err   error
	calls atomic.Int64
}

func (f *fixed) Predict(context.Context, map[string]any) (map[string]any, error) {
	f.calls.Add(1)
	if f.err != nil {
		return nil, f.err
	}
	out := make(map[string]any, len(f.out))
	for k, v := range f.out {
		out[k] = v
	}
	return out, nil
}

func (f *fixed) PredictBatch(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	out := make([]map[string]any, len(inputs))
	for i := range inputs {
		o, err := f.Predict(ctx, inputs[i])
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

func label(l string, probs ...float64) *fixed {
	out := map[string]any{"label": l}
	if len(probs) > 0 {
		p := map[string]any{}
		for i, x := range probs {
			p[nli.Labels[i]] = x
		}
		out["prob"] = p
	}
	return &fixed{out: out}
}

func failing(kind string) *fixed {
	return &fixed{err: &dynabench.ModelError{Kind: kind, Err: errors.New(kind + " happened")}}
}

func members(ps ...dynabench.Predictor) []ensemble.Member {
	out := make([]ensemble.Member, len(ps))
	for i, p := range ps {
		out[i] = ensemble.Member{Name: string(rune('a' + i)), Predictor: p}
	}
	return out
}

func must(t *testing.T, sp spec.Spec, mode ensemble.Mode, ms []ensemble.Member, src rand.Source) *ensemble.Ensemble {
	t.Helper()
	e, err := ensemble.New(sp, mode, ms, src)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func probOf(out map[string]any, l string) float64 { return out["prob"].(map[string]any)[l].(float64) }

func TestMean(t *testing.T) {
	t.Parallel()
	e := must(t, nli, ensemble.Mean, members(
		label("entailed", 0.6, 0.3, 0.1),
		label("neutral", 0.2, 0.7, 0.1),
		label("neutral"),             // no prob: certain of its label
		label("entailed", 0.5, 0, 0), // normalised before averaging
	), nil)
	out, err := e.Predict(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// entailed: (0.6+0.2+0+1)/4 = 0.45; neutral: (0.3+0.7+1+0)/4 = 0.5
	if out["label"] != "neutral" || math.Abs(probOf(out, "entailed")-0.45) > 1e-12 || math.Abs(probOf(out, "neutral")-0.5) > 1e-12 {
		t.Errorf("Predict = %v", out)
	}
	rec := out[ensemble.RecordField].(map[string]any)
	if !reflect.DeepEqual(rec["answered"], []any{"a", "b", "c", "d"}) || len(rec["skipped"].(map[string]any)) != 0 || rec["mode"] != "mean" {
		t.Errorf("record %v", rec)
	}
}

func TestVote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ms   []ensemble.Member
		want string
	}{
		{"majority beats confidence", members(label("neutral", 0, 0.51, 0.49), label("neutral", 0, 0.51, 0.49), label("entailed", 1, 0, 0)), "neutral"},
		{"tie broken by mean prob", members(label("neutral", 0.1, 0.5, 0.4), label("contradictory", 0.1, 0.3, 0.6)), "contradictory"},
		{"then by label order", members(label("contradictory"), label("neutral")), "neutral"},
	}
	for _, tt := range tests {
		e := must(t, nli, ensemble.Vote, tt.ms, nil)
		out, err := e.Predict(context.Background(), nil)
		if err != nil || out["label"] != tt.want {
			t.Errorf("%s: Predict = %v, %v; want %s", tt.name, out, err, tt.want)
		}
	}
}

func TestFailingMembersAreSkipped(t *testing.T) {
	t.Parallel()
	bad := &fixed{out: map[string]any{"label": "maybe"}}
	e := must(t, nli, ensemble.Mean, members(failing(dynabench.ModelTimeout), label("contradictory"), bad), nil)
	out, err := e.Predict(context.Background(), nil)
	if err != nil || out["label"] != "contradictory" {
		t.Fatalf("Predict = %v, %v", out, err)
	}
	rec := out[ensemble.RecordField].(map[string]any)
	skipped := rec["skipped"].(map[string]any)
	if !reflect.DeepEqual(rec["answered"], []any{"b"}) || !strings.HasPrefix(skipped["a"].(string), "timeout: ") ||
		!strings.HasPrefix(skipped["c"].(string), "invalid_answer: ") {
		t.Errorf("record %v", rec)
	}
	st := e.Stats()
	if st[0].Skipped != 1 || st[1].Answered != 1 || st[2].Skipped != 1 {
		t.Errorf("stats %+v", st)
	}

	all := must(t, nli, ensemble.Vote, members(failing(dynabench.ModelBadStatus), failing(dynabench.ModelTimeout)), nil)
	_, err = all.Predict(context.Background(), nil)
	var me *dynabench.ModelError
	if !errors.As(err, &me) || me.Kind != dynabench.ModelBadStatus {
		t.Errorf("all failing: %v, want the first member's error", err)
	}
}

func TestQAMeanAndVote(t *testing.T) {
	t.Parallel()
	ans := func(a string, conf ...float64) *fixed {
		out := map[string]any{"answer": a}
		if len(conf) > 0 {
			out["conf"] = conf[0]
		}
		return &fixed{out: out}
	}
	ms := members(ans("the Eiffel Tower", 0.4), ans("Eiffel Tower", 0.3), ans("Paris", 0.9))
	out, err := must(t, qa, ensemble.Mean, ms, nil).Predict(context.Background(), nil)
	// "the Eiffel Tower" and "Eiffel Tower" normalise alike: 0.7 < 0.9.
	if err != nil || out["answer"] != "Paris" || math.Abs(out["conf"].(float64)-0.3) > 1e-12 {
		t.Errorf("mean: %v, %v", out, err)
	}
	out, err = must(t, qa, ensemble.Vote, ms, nil).Predict(context.Background(), nil)
	if err != nil || out["answer"] != "the Eiffel Tower" || math.Abs(out["conf"].(float64)-0.7/3) > 1e-12 {
		t.Errorf("vote: %v, %v", out, err)
	}
	out, err = must(t, qa, ensemble.Mean, members(ans("a"), ans("b")), nil).Predict(context.Background(), nil)
	if err != nil || out["answer"] != "a" || out["conf"] != 0.5 {
		t.Errorf("ties and no conf: %v, %v", out, err)
	}
}

func TestRandom(t *testing.T) {
	t.Parallel()
	a, b, c := label("entailed"), label("neutral"), label("contradictory")
	e := must(t, nli, ensemble.Random, members(a, b, c), rand.NewPCG(1, 2))
	seen := map[any]int{}
	for range 300 {
		out, err := e.Predict(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		seen[out["label"]]++
	}
	if len(seen) != 3 || a.calls.Load()+b.calls.Load()+c.calls.Load() != 300 {
		t.Errorf("picks %v: one member per call, each sometimes", seen)
	}
	// The same seed picks the same members.
	e1 := must(t, nli, ensemble.Random, members(a, b, c), rand.NewPCG(7, 7))
	e2 := must(t, nli, ensemble.Random, members(a, b, c), rand.NewPCG(7, 7))
	for range 20 {
		o1, _ := e1.Predict(context.Background(), nil)
		o2, _ := e2.Predict(context.Background(), nil)
		if o1["label"] != o2["label"] {
			t.Fatal("same seed, different picks")
		}
	}
	// A failing pick falls back to the next member.
	down := failing(dynabench.ModelUnreachable)
	e3 := must(t, nli, ensemble.Random, members(down, down, label("neutral")), rand.NewPCG(3, 4))
	for range 10 {
		out, err := e3.Predict(context.Background(), nil)
		if err != nil || out["label"] != "neutral" {
			t.Fatalf("fallback: %v, %v", out, err)
		}
	}
}

func TestBatch(t *testing.T) {
	t.Parallel()
	inputs := make([]map[string]any, 7)
	e := must(t, nli, ensemble.Vote, members(label("neutral"), failing(dynabench.ModelTimeout), label("neutral"), label("entailed")), nil)
	out, err := e.PredictBatch(context.Background(), inputs)
	if err != nil || len(out) != 7 {
		t.Fatal(out, err)
	}
	for _, o := range out {
		if o["label"] != "neutral" {
			t.Errorf("answer %v", o)
		}
	}
	r := must(t, nli, ensemble.Random, members(label("neutral"), failing(dynabench.ModelTimeout), label("neutral")), rand.NewPCG(5, 6))
	out, err = r.PredictBatch(context.Background(), inputs)
	if err != nil || len(out) != 7 {
		t.Fatal(out, err)
	}
	for _, o := range out {
		if o["label"] != "neutral" {
			t.Errorf("answer %v", o)
		}
	}
	if out, err := r.PredictBatch(context.Background(), nil); err != nil || len(out) != 0 {
		t.Errorf("empty batch: %v, %v", out, err)
	}
}

func TestNewChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode  ensemble.Mode
		ms    []ensemble.Member
		sp    spec.Spec
		field string
	}{
		{ensemble.Mean, nil, nli, "members"},
		{"median", members(label("neutral")), nli, "mode"},
		{ensemble.Mean, members(label("neutral")), spec.Spec{LabelField: "tags"}, "mode"},
		{ensemble.Vote, []ensemble.Member{{Name: "x", Predictor: label("a")}, {Name: "x", Predictor: label("b")}}, nli, "members[1]"},
	}
	for _, tt := range tests {
		_, err := ensemble.New(tt.sp, tt.mode, tt.ms, nil)
		var de *dynabench.Error
		if !errors.As(err, &de) || de.Field != tt.field {
			t.Errorf("%s: %v, want field %s", tt.mode, err, tt.field)
		}
	}
	if _, err := ensemble.New(spec.Spec{LabelField: "tags"}, ensemble.Random, members(label("x")), nil); err != nil {
		t.Errorf("random over any task: %v", err)
	}
}
