package builtin_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/builtin"
	"github.com/dynabench-go/dynabench/internal/demo"
)

func demoTask(t testing.TB, code string) demo.Task {
	t.Helper()
	tasks, err := demo.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if task.Code == code {
			return task
		}
	}
	t.Fatalf("no demo task %q", code)
	return demo.Task{}
}

// crossValidate trains on four fifths of the examples and scores the rest, five times over, and returns
// the model's mean score and that of always answering the training majority label.
func crossValidate(t *testing.T, ex []builtin.TrainingExample, train func([]builtin.TrainingExample) dynabench.Predictor,
	score func(out map[string]any, gold string) float64, answer func(label string) map[string]any) (model, majority float64) {
	ex = slices.Clone(ex)
	rand.New(rand.NewPCG(11, 13)).Shuffle(len(ex), func(i, j int) { ex[i], ex[j] = ex[j], ex[i] })
	const folds = 5
	for f := range folds {
		var fit, held []builtin.TrainingExample
		for i, e := range ex {
			if i%folds == f {
				held = append(held, e)
			} else {
				fit = append(fit, e)
			}
		}
		m, maj := train(fit), majorityLabel(fit)
		for _, e := range held {
			out, err := m.Predict(context.Background(), e.Input)
			if err != nil {
				t.Fatal(err)
			}
			model += score(out, e.Label)
			majority += score(answer(maj), e.Label)
		}
	}
	return model / float64(len(ex)), majority / float64(len(ex))
}

func majorityLabel(ex []builtin.TrainingExample) string {
	counts := map[string]int{}
	best := ""
	for _, e := range ex {
		counts[e.Label]++
		if n := counts[e.Label]; n > counts[best] || n == counts[best] && e.Label < best {
			best = e.Label
		}
	}
	return best
}

// TestDemoSeedHeldOut cross-validates the models on the demo seed sets and requires them to beat the
// majority baseline; run with -v for the numbers. These are weak baselines, and the seed sets are small.
func TestDemoSeedHeldOut(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("25 trainings; slow under -race")
	}
	for _, tc := range []struct {
		code, name string
		o          builtin.ClassifierOptions
		reference  bool // shown for comparison only
	}{
		{"sentiment", "classifier", builtin.ClassifierOptions{TextFields: []string{"statement"}}, false},
		{"nli", "pair classifier", builtin.ClassifierOptions{PremiseField: "context", HypothesisField: "hypothesis"}, false},
		{"nli", "hypothesis only", builtin.ClassifierOptions{TextFields: []string{"hypothesis"}}, true},
		{"hs", "classifier", builtin.ClassifierOptions{TextFields: []string{"statement"}}, false},
	} {
		t.Run(tc.code+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			train := func(ex []builtin.TrainingExample) dynabench.Predictor {
				c, err := builtin.TrainClassifier(ex, tc.o)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			exact := func(out map[string]any, gold string) float64 { return b2f(out["label"] == gold) }
			asLabel := func(l string) map[string]any { return map[string]any{"label": l} }
			model, maj := crossValidate(t, demoTask(t, tc.code).Seed, train, exact, asLabel)
			t.Logf("5-fold accuracy %.3f, majority label %.3f", model, maj)
			if model <= maj && !tc.reference {
				t.Errorf("accuracy %.3f does not beat the majority baseline %.3f", model, maj)
			}
		})
	}
	t.Run("qa/span model", func(t *testing.T) {
		t.Parallel()
		train := func(ex []builtin.TrainingExample) dynabench.Predictor {
			m, err := builtin.TrainSpanModel(ex, builtin.SpanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		f1 := func(out map[string]any, gold string) float64 { return squadF1(out["answer"].(string), gold) }
		asAnswer := func(a string) map[string]any { return map[string]any{"answer": a} }
		model, maj := crossValidate(t, demoTask(t, "qa").Seed, train, f1, asAnswer)
		t.Logf("5-fold SQuAD F1 %.3f, majority answer %.3f", model, maj)
		if model <= maj {
			t.Errorf("F1 %.3f does not beat the majority answer's %.3f", model, maj)
		}
	})
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// squadF1 is the SQuAD word-overlap F1 after lower-casing and dropping punctuation and articles.
func squadF1(pred, gold string) float64 {
	norm := func(s string) []string {
		s = strings.Map(func(r rune) rune {
			if strings.ContainsRune(".,;:!?'\"()", r) {
				return -1
			}
			return r
		}, strings.ToLower(s))
		return slices.DeleteFunc(strings.Fields(s), func(w string) bool { return w == "a" || w == "an" || w == "the" })
	}
	p, g := norm(pred), norm(gold)
	counts := map[string]int{}
	for _, w := range g {
		counts[w]++
	}
	same := 0
	for _, w := range p {
		if counts[w] > 0 {
			counts[w]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	prec, rec := float64(same)/float64(len(p)), float64(same)/float64(len(g))
	return 2 * prec * rec / (prec + rec)
}
