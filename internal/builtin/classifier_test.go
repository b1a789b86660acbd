package builtin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/builtin"
)

// toyTopics is a linearly separable set: the label is the topic of the nouns.
func toyTopics() (train, test []builtin.TrainingExample) {
	labels := []string{"food", "sport"}
	topics := [][]string{
		{"pasta", "soup", "bread", "cheese", "salad", "curry", "pie", "noodles"},
		{"football", "tennis", "rugby", "hockey", "cricket", "golf", "boxing", "rowing"},
	}
	frames := []string{"I talked about %s and %s today", "%s is better than %s", "we love %s, not %s", "more %s and %s please"}
	for i := range topics[0] {
		for k, nouns := range topics {
			a, label := nouns[i], labels[k]
			for j, f := range frames {
				ex := builtin.TrainingExample{Input: map[string]any{"text": fmt.Sprintf(f, a, nouns[(i+j+1)%len(nouns)])}, Label: label}
				if (i+j)%4 == 0 {
					test = append(test, ex)
				} else {
					train = append(train, ex)
				}
			}
		}
	}
	return train, test
}

func trainToy(t testing.TB, seed uint64) *builtin.Classifier {
	t.Helper()
	train, _ := toyTopics()
	c, err := builtin.TrainClassifier(train, builtin.ClassifierOptions{TextFields: []string{"text"}, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func marshal(t testing.TB, m interface{ MarshalBinary() ([]byte, error) }) []byte {
	t.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestClassifierDeterministic(t *testing.T) {
	t.Parallel()
	a, b := marshal(t, trainToy(t, 7)), marshal(t, trainToy(t, 7))
	if !bytes.Equal(a, b) {
		t.Fatal("same data and seed gave different weights")
	}
	if bytes.Equal(a, marshal(t, trainToy(t, 8))) {
		t.Error("a different seed gave identical weights; is the seed used?")
	}
}

func TestClassifierLearnsSeparableSet(t *testing.T) {
	t.Parallel()
	c := trainToy(t, 1)
	_, test := toyTopics()
	for _, ex := range test {
		out, err := c.Predict(context.Background(), ex.Input)
		if err != nil {
			t.Fatal(err)
		}
		if out["label"] != ex.Label {
			t.Errorf("%q: got %v, want %s", ex.Input["text"], out["label"], ex.Label)
		}
	}
}

func TestClassifierProbabilities(t *testing.T) {
	t.Parallel()
	c := trainToy(t, 1)
	for _, text := range []string{"", "soup", "golf and bread", strings.Repeat("tennis ", 2000), "¿¡ünïcødé!?"} {
		out, err := c.Predict(context.Background(), map[string]any{"text": text})
		if err != nil {
			t.Fatal(err)
		}
		prob := out["prob"].(map[string]any)
		var sum, best float64
		for _, p := range prob {
			v := p.(float64)
			if v < 0 || v > 1 || math.IsNaN(v) {
				t.Errorf("%q: probability %v", text, v)
			}
			sum += v
			best = max(best, v)
		}
		if math.Abs(sum-1) > 1e-9 || len(prob) != 2 || prob[out["label"].(string)].(float64) != best {
			t.Errorf("%q: label %v, probabilities %v (sum %v)", text, out["label"], prob, sum)
		}
	}
}

func TestClassifierOutputFieldNames(t *testing.T) {
	t.Parallel()
	train, _ := toyTopics()
	c, err := builtin.TrainClassifier(train, builtin.ClassifierOptions{TextFields: []string{"text"}, LabelField: "y", ProbField: "p"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Predict(context.Background(), map[string]any{"text": "soup"})
	if err != nil || out["y"] != "food" || out["p"] == nil || len(out) != 2 {
		t.Fatalf("Predict = %v, %v", out, err)
	}
}

func TestClassifierRoundTrip(t *testing.T) {
	t.Parallel()
	c := trainToy(t, 3)
	data := marshal(t, c)
	c2, err := builtin.UnmarshalClassifier(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, marshal(t, c2)) {
		t.Error("re-marshalled bytes differ")
	}
	_, test := toyTopics()
	for _, ex := range test {
		a, _ := c.Predict(context.Background(), ex.Input)
		b, _ := c2.Predict(context.Background(), ex.Input)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%v: %v before, %v after", ex.Input, a, b)
		}
	}
}

func TestUnmarshalClassifierGarbage(t *testing.T) {
	t.Parallel()
	train, _ := toyTopics()
	c, err := builtin.TrainClassifier(train[:8], builtin.ClassifierOptions{TextFields: []string{"text"}, Buckets: 64})
	if err != nil {
		t.Fatal(err)
	}
	data := marshal(t, c)
	for n := range len(data) { // every truncation fails cleanly
		if _, err := builtin.UnmarshalClassifier(data[:n]); err == nil {
			t.Fatalf("no error for %d of %d bytes", n, len(data))
		}
	}
	for i := range data { // every flipped byte fails or decodes, never panics
		bad := bytes.Clone(data)
		bad[i] ^= 0xa5
		builtin.UnmarshalClassifier(bad)
	}
	if _, err := builtin.UnmarshalClassifier(append(bytes.Clone(data), 0)); err == nil {
		t.Error("no error for trailing bytes")
	}
	if _, err := builtin.UnmarshalSpanModel(data); err == nil {
		t.Error("a classifier decoded as a span model")
	}
}

func TestTrainClassifierRejectsBadOptions(t *testing.T) {
	t.Parallel()
	train, _ := toyTopics()
	text := []string{"text"}
	for name, tc := range map[string]struct {
		ex []builtin.TrainingExample
		o  builtin.ClassifierOptions
	}{
		"no examples":     {nil, builtin.ClassifierOptions{TextFields: text}},
		"no fields":       {train, builtin.ClassifierOptions{}},
		"half a pair":     {train, builtin.ClassifierOptions{PremiseField: "text"}},
		"unknown label":   {train, builtin.ClassifierOptions{TextFields: text, Labels: []string{"food", "art"}}},
		"one label":       {train[:1], builtin.ClassifierOptions{TextFields: text}},
		"repeated labels": {train, builtin.ClassifierOptions{TextFields: text, Labels: []string{"food", "sport", "food"}}},
		"huge buckets":    {train, builtin.ClassifierOptions{TextFields: text, Buckets: 1 << 30}},
		"negative L2":     {train, builtin.ClassifierOptions{TextFields: text, L2: -1}},
		"missing field":   {train, builtin.ClassifierOptions{TextFields: []string{"body"}}},
	} {
		if _, err := builtin.TrainClassifier(tc.ex, tc.o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// badInputs are inputs no model can read; each must be an invalid-answer *dynabench.ModelError.
var badInputs = map[string]map[string]any{
	"nil":        nil,
	"empty":      {},
	"number":     {"text": 42, "context": 1, "question": 2.5, "hypothesis": true},
	"null":       {"text": nil, "context": nil, "question": nil, "hypothesis": nil},
	"object":     {"text": map[string]any{"a": "b"}, "context": []any{"x"}, "question": []byte("q")},
	"too long":   {"text": strings.Repeat("x", 200_000), "context": strings.Repeat("y ", 100_000), "question": "q"},
	"wrong case": {"Text": "hello", "Context": "A b.", "Question": "c?"},
}

func checkInvalid(t *testing.T, name string, err error) {
	t.Helper()
	var me *dynabench.ModelError
	if !errors.As(err, &me) || me.Kind != dynabench.ModelInvalidAnswer {
		t.Errorf("%s: error %v, want an invalid-answer ModelError", name, err)
	}
}

func TestClassifierBadInputs(t *testing.T) {
	t.Parallel()
	c := trainToy(t, 1)
	for name, in := range badInputs {
		out, err := c.Predict(context.Background(), in)
		if out != nil {
			t.Errorf("%s: output %v", name, out)
		}
		checkInvalid(t, name, err)
	}
	_, err := c.PredictBatch(context.Background(), []map[string]any{{"text": "soup"}, nil})
	checkInvalid(t, "batch", err)
}

func TestPredictHonoursContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in := map[string]any{"text": "soup", "context": "Soup is hot.", "question": "What is hot?"}
	for name, m := range map[string]dynabench.Predictor{"classifier": trainToy(t, 1), "span": trainToySpan(t, 1)} {
		if _, err := m.Predict(ctx, in); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Predict error %v, want context.Canceled", name, err)
		}
		if _, err := m.PredictBatch(ctx, []map[string]any{in, in}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: PredictBatch error %v, want context.Canceled", name, err)
		}
	}
}

func TestPredictConcurrently(t *testing.T) {
	t.Parallel()
	c, s := trainToy(t, 1), trainToySpan(t, 1)
	_, test := toyTopics()
	_, spanTest := toyBios()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				in := test[(g+i)%len(test)].Input
				if _, err := c.Predict(context.Background(), in); err != nil {
					t.Error(err)
				}
				if _, err := s.Predict(context.Background(), spanTest[(g+i)%len(spanTest)].Input); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

// negationPairs builds NLI pairs whose label depends only on whether premise and hypothesis agree in
// polarity: "X is Y" / "X is not Y". A hypothesis alone carries no signal: "not" is as common in either label.
func negationPairs(subjects, predicates []string) []builtin.TrainingExample {
	var out []builtin.TrainingExample
	for _, s := range subjects {
		for _, p := range predicates {
			pos, neg := s+" is "+p+".", s+" is not "+p+"."
			for _, pair := range [][3]string{{pos, pos, "entailed"}, {neg, neg, "entailed"}, {pos, neg, "contradictory"}, {neg, pos, "contradictory"}} {
				out = append(out, builtin.TrainingExample{Input: map[string]any{"context": pair[0], "hypothesis": pair[1]}, Label: pair[2]})
			}
		}
	}
	return out
}

// TestNLIUsesPairFeatures shows the pair features at work: on pairs where only the agreement of negation
// between premise and hypothesis decides the label, the pair classifier generalises to unseen sentences and
// a hypothesis-only classifier cannot beat chance.
func TestNLIUsesPairFeatures(t *testing.T) {
	t.Parallel()
	train := negationPairs([]string{"The man", "A girl", "The chef", "My neighbour", "The old dog"},
		[]string{"reading a book", "at the station", "happy with the result", "cooking dinner", "asleep"})
	test := negationPairs([]string{"The pilot", "Our teacher", "A small cat"},
		[]string{"painting the fence", "in the garden", "late for work"})
	labels := []string{"entailed", "neutral", "contradictory"}
	pair, err := builtin.TrainClassifier(train, builtin.ClassifierOptions{Labels: labels, PremiseField: "context", HypothesisField: "hypothesis"})
	if err != nil {
		t.Fatal(err)
	}
	hypOnly, err := builtin.TrainClassifier(train, builtin.ClassifierOptions{Labels: labels, TextFields: []string{"hypothesis"}})
	if err != nil {
		t.Fatal(err)
	}
	pairAcc, hypAcc := accuracy(t, pair, test), accuracy(t, hypOnly, test)
	t.Logf("negation pairs: pair features %.2f, hypothesis only %.2f", pairAcc, hypAcc)
	if pairAcc < 0.95 || hypAcc > 0.6 {
		t.Errorf("accuracy with pair features %.2f (want ≥ 0.95), hypothesis only %.2f (want ≤ 0.6)", pairAcc, hypAcc)
	}
	// The same hypothesis flips label with the premise's polarity.
	hyp := "The pilot is not painting the fence."
	for premise, want := range map[string]string{"The pilot is painting the fence.": "contradictory", hyp: "entailed"} {
		out, _ := pair.Predict(context.Background(), map[string]any{"context": premise, "hypothesis": hyp})
		if out["label"] != want {
			t.Errorf("%q ⇒ %q: %v, want %s", premise, hyp, out["label"], want)
		}
	}
}

func accuracy(t *testing.T, m dynabench.Predictor, test []builtin.TrainingExample) float64 {
	t.Helper()
	var right int
	for _, ex := range test {
		out, err := m.Predict(context.Background(), ex.Input)
		if err != nil {
			t.Fatal(err)
		}
		if out["label"] == ex.Label {
			right++
		}
	}
	return float64(right) / float64(len(test))
}
