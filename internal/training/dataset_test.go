package training_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/builtin"
	"github.com/dynabench-go/dynabench/internal/training"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	var rows []training.Example
	for i := range 20000 {
		rows = append(rows, training.Example{Key: fmt.Sprintf("example:%d", i)})
	}
	for _, ratio := range []float64{0.1, 0.3} {
		train, held := training.Split(rows, ratio)
		if share := float64(len(held)) / float64(len(rows)); math.Abs(share-ratio) > 0.01 || len(train)+len(held) != len(rows) {
			t.Errorf("ratio %v: held out %d of %d", ratio, len(held), len(rows))
		}
	}
	// A row's side depends on its key alone: the first half splits the same way on its own, and a row
	// held out at 10% is held out at 30%.
	_, all := training.Split(rows, 0.1)
	_, half := training.Split(rows[:10000], 0.1)
	keyOf := func(r training.Example) string { return r.Key }
	if !slices.Equal(keys(half, keyOf), keys(all[:len(half)], keyOf)) {
		t.Error("adding rows moved old rows across the split")
	}
	for _, r := range all {
		if !training.IsHeldOut(r.Key, 0.3) {
			t.Fatalf("%s held out at 10%% but not at 30%%", r.Key)
		}
	}
	if training.IsHeldOut("x", 0) || training.IsHeldOut("x", -1) || !training.IsHeldOut("x", 1) {
		t.Error("edge ratios")
	}
}

func keys[T any](xs []T, key func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = key(x)
	}
	return out
}

func TestPlanChoice(t *testing.T) {
	t.Parallel()
	train := func(code string, rows []training.Example, features string) (training.Hyperparameters, error) {
		cfg := parseConfig(t, demoTask(t, code).Config)
		a, err := training.Train(ctx, cfg, training.Dataset{Sources: []training.Source{{Name: "x", Examples: rows}}},
			training.Options{Features: features, HeldOut: -1, Epochs: 1, Buckets: 64}, nil)
		if err != nil {
			return training.Hyperparameters{}, err
		}
		return a.Manifest.Hyperparameters, nil
	}
	row := func(in map[string]any, label string) []training.Example {
		return []training.Example{{Key: "a", Input: in, Label: label}, {Key: "b", Input: in, Label: label}}
	}
	withContext := row(map[string]any{"context": "A film.", "statement": "Loved it."}, "positive")
	noContext := row(map[string]any{"statement": "Loved it."}, "positive")

	hp, err := train("sentiment", noContext, "")
	must(t, err)
	if hp.Features != training.FeaturesText || !slices.Equal(hp.TextFields, []string{"statement"}) || hp.OutputField != "label" || hp.ScoreField != "prob" {
		t.Errorf("sentiment seed rows: %+v", hp)
	}
	// The same config with rows that carry their context reads as a pair unless told otherwise.
	hp, err = train("sentiment", withContext, "")
	must(t, err)
	if hp.Features != training.FeaturesPair || hp.PremiseField != "context" || hp.HypothesisField != "statement" {
		t.Errorf("sentiment rows with contexts: %+v", hp)
	}
	hp, err = train("sentiment", withContext, training.FeaturesText)
	must(t, err)
	if hp.Features != training.FeaturesText {
		t.Errorf("forced text: %+v", hp)
	}
	if _, err := train("sentiment", noContext, training.FeaturesPair); !dynabench.IsCode(err, dynabench.EINVALID) {
		t.Errorf("forced pair on rows without the premise: %v", err)
	}
	hp, err = train("qa", row(map[string]any{"context": "Ann lives in Paris.", "question": "Where does Ann live?"}, "Paris"), "")
	must(t, err)
	if hp.ContextField != "context" || hp.QuestionField != "question" || hp.OutputField != "answer" || hp.ScoreField != "conf" {
		t.Errorf("qa: %+v", hp)
	}

	// Targets the built-in models cannot learn.
	for name, src := range map[string]string{
		"multilabel": `
context: [{name: text, type: string}]
input: [{name: topics, type: multilabel, labels: [a, b]}]
output: [{name: topics}]
model_wrong_metric: {type: exact_match, reference_names: [topics]}
perf_metric: {type: accuracy, reference_name: topics}`,
		"free text": `
context: [{name: text, type: string}]
input: [{name: summary, type: string}]
output: [{name: summary}]
model_wrong_metric: {type: string_f1, reference_name: summary, threshold: 0.5}
perf_metric: {type: squad_f1, reference_name: summary}`,
	} {
		cfg := parseConfig(t, []byte(src))
		_, err := training.Train(ctx, cfg, training.Dataset{Sources: []training.Source{{Examples: row(map[string]any{"text": "x"}, "a")}}},
			training.Options{}, nil)
		if !dynabench.IsCode(err, dynabench.EINVALID) {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
	}
}

func TestSeedSource(t *testing.T) {
	t.Parallel()
	cfg := parseConfig(t, demoTask(t, "nli").Config)
	src, err := training.SeedSource("seed", cfg, []builtin.TrainingExample{
		{Input: map[string]any{"context": "P.", "hypothesis": "H.", "extra": 1.0}, Label: " neutral "},
	})
	must(t, err)
	want := training.Example{Key: "seed:0", Input: map[string]any{"context": "P.", "hypothesis": "H."}, Label: "neutral"}
	if len(src.Examples) != 1 || fmt.Sprint(src.Examples[0]) != fmt.Sprint(want) {
		t.Fatalf("got %+v, want %+v", src.Examples, want)
	}
	_, err = training.SeedSource("seed", cfg, []builtin.TrainingExample{{Input: map[string]any{"context": "P."}, Label: "maybe"}})
	if !strings.Contains(fmt.Sprint(err), `"maybe" is not one of`) {
		t.Fatalf("bad seed label: %v", err)
	}
}

func TestReadJSONL(t *testing.T) {
	t.Parallel()
	nli := parseConfig(t, demoTask(t, "nli").Config)
	qa := parseConfig(t, demoTask(t, "qa").Config)
	src, err := training.ReadJSONL("dev.jsonl", nli, strings.NewReader(`
{"uid": "a1", "context": "A dog runs.", "hypothesis": "An animal moves.", "label": "entailed", "tags": ["x"]}

{"context": "A dog runs.", "hypothesis": "A cat sleeps.", "label": "contradictory"}
{"uid": 7, "input": {"context": "A dog runs.", "hypothesis": "It is sunny."}, "label": "neutral"}
`))
	must(t, err)
	var prefixes, labels []string
	for _, ex := range src.Examples {
		prefixes, labels = append(prefixes, ex.Key[:min(len(ex.Key), 8)]), append(labels, ex.Label)
		if len(ex.Input) != 2 || ex.Input["context"] != "A dog runs." {
			t.Errorf("model input %v", ex.Input)
		}
	}
	if !slices.Equal(prefixes, []string{"uid:a1", "row:" + src.Examples[1].Key[4:8], "uid:7"}) ||
		!slices.Equal(labels, []string{"entailed", "contradictory", "neutral"}) {
		t.Fatalf("keys %q labels %q", prefixes, labels)
	}
	// The same row content gets the same key from any file.
	again, err := training.ReadJSONL("other.jsonl", nli, strings.NewReader(`{"hypothesis": "A cat sleeps.", "label": "contradictory", "context": "A dog runs."}`))
	must(t, err)
	if again.Examples[0].Key != src.Examples[1].Key {
		t.Error("content key depends on the file")
	}

	for name, tc := range map[string]struct {
		cfg        any
		body, want string
	}{
		"bad json":      {nli, `{"context": "x", "hypothesis": "y", "label": "neutral"}` + "\n{oops", "dev.jsonl:2"},
		"not an object": {nli, `[1, 2]`, "not a JSON object"},
		"bad label":     {nli, `{"context": "x", "hypothesis": "y", "label": "maybe"}`, `input.label`},
		"no hypothesis": {nli, `{"context": "x", "label": "neutral"}`, "input.hypothesis: required"},
		"answer not in context": {qa, `{"context": "Ann lives in Paris.", "question": "Where?", "answer": "Rome"}`,
			"input.answer"},
		"long line": {nli, `{"context": "` + strings.Repeat("x", training.MaxLineBytes) + `"}`, "longer than"},
	} {
		cfg := nli
		if tc.cfg == qa {
			cfg = qa
		}
		_, err := training.ReadJSONL("dev.jsonl", cfg, strings.NewReader(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", name, err, tc.want)
		}
		if code := dynabench.ErrorCode(err); code != dynabench.EINVALID && code != dynabench.ETOOLARGE {
			t.Errorf("%s: code %q", name, code)
		}
	}
}

func TestRoundSources(t *testing.T) {
	t.Parallel()
	e := newStoreEnv(t, "nli")
	r1, r2 := e.round(t), e.round(t)
	premise := map[string]any{"context": "Two dogs play in the snow."}
	in := func(h, label string) map[string]any { return map[string]any{"hypothesis": h, "label": label} }
	w1 := e.write(t, r1, []written{
		{premise, in("Animals are outside.", "entailed"), dynabench.StatusVerified},
		{premise, in("The dogs are cats.", "contradictory"), dynabench.StatusPending},
		{premise, in("It is winter.", "neutral"), dynabench.StatusRejected},
		{premise, in("A label renamed since.", "maybe"), dynabench.StatusVerified},
	})
	// Enough verified examples in round 2 to need two pages.
	many := make([]written, dynabench.MaxExamplesPage+5)
	for i := range many {
		many[i] = written{premise, in(fmt.Sprintf("There are %d dogs.", i), "neutral"), dynabench.StatusVerified}
	}
	w2 := e.write(t, r2, many)

	var loaded []int
	srcs, err := training.RoundSources(ctx, e.store, e.cfg, []*dynabench.Round{r1, r2}, func(stage string, done, total int) {
		if stage != training.StageLoading || total != -1 {
			t.Errorf("progress %s %d/%d", stage, done, total)
		}
		loaded = append(loaded, done)
	})
	must(t, err)
	if len(srcs) != 2 || srcs[0].Name != "round:1" || srcs[1].Name != "round:2" {
		t.Fatalf("sources %+v", srcs)
	}
	if len(srcs[0].Examples) != 1 || srcs[0].Skipped != 1 || len(srcs[1].Examples) != len(many) {
		t.Fatalf("round 1: %d rows, %d skipped; round 2: %d rows", len(srcs[0].Examples), srcs[0].Skipped, len(srcs[1].Examples))
	}
	got := srcs[0].Examples[0]
	want := training.Example{Key: fmt.Sprintf("example:%d", w1[0].ID), Label: "entailed",
		Input: map[string]any{"context": "Two dogs play in the snow.", "hypothesis": "Animals are outside."}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if last := srcs[1].Examples[len(many)-1]; last.Key != fmt.Sprintf("example:%d", w2[len(w2)-1].ID) {
		t.Fatalf("last row of round 2: %s", last.Key)
	}
	if !slices.IsSorted(loaded) || loaded[len(loaded)-1] != 2+len(many) {
		t.Errorf("loading progress %v", loaded)
	}
}

func TestHeldOutScores(t *testing.T) {
	t.Parallel()
	// A toy task the model cannot get wrong on held-out rows: the label is the only word.
	cfg := parseConfig(t, demoTask(t, "sentiment").Config)
	var rows []training.Example
	for i := range 300 {
		label := []string{"positive", "negative", "neutral"}[i%3]
		rows = append(rows, training.Example{Key: fmt.Sprint(i), Input: map[string]any{"statement": label + " " + label}, Label: label})
	}
	a, err := training.Train(ctx, cfg, training.Dataset{Sources: []training.Source{{Name: "toy", Examples: rows}}}, training.Options{HeldOut: 0.2}, nil)
	must(t, err)
	s := a.Manifest.HeldOutScores
	if s[training.ScoreAccuracy] != 1 || s[training.ScoreMacroF1] != 1 {
		t.Fatalf("scores %v on a trivial task", s)
	}
}
