package builtin_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench/internal/builtin"
)

// The fuzz targets run their seeds under go test; run `go test -fuzz FuzzX ./internal/builtin/` to search.

func FuzzClassifierPredict(f *testing.F) {
	labels := []string{"entailed", "neutral", "contradictory"}
	train := negationPairs([]string{"The man", "A girl"}, []string{"asleep", "at home"})
	train = append(train, builtin.TrainingExample{Input: map[string]any{"context": "A cat.", "hypothesis": "It is blue."}, Label: "neutral"})
	c, err := builtin.TrainClassifier(train, builtin.ClassifierOptions{Labels: labels, PremiseField: "context", HypothesisField: "hypothesis"})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range [][2]string{{"", ""}, {"Nobody won't go.", "n't n't n't"}, {"\xff\xfe'", "-.,'’"}, {"1,2.3.4", "one 1 1.0"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, premise, hypothesis string) {
		out, err := c.Predict(context.Background(), map[string]any{"context": premise, "hypothesis": hypothesis})
		if err != nil {
			return // an over-long field
		}
		var sum float64
		for _, p := range out["prob"].(map[string]any) {
			sum += p.(float64)
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("probabilities sum to %v", sum)
		}
	})
}

func FuzzSpanPredict(f *testing.F) {
	m := trainToySpan(f, 1)
	for _, s := range [][2]string{{"", ""}, {"a", "who"}, {"A.B.C. 1,200 ’’ -- x-y", "How many?"}, {"Zoë was born in 1990.\n\nShe left.", "When?"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, c, q string) {
		out, err := m.Predict(context.Background(), map[string]any{"context": c, "question": q})
		if err != nil {
			return // no candidate span, or an over-long field
		}
		a, conf := out["answer"].(string), out["conf"].(float64)
		if a == "" || !strings.Contains(c, a) || !(conf >= 0 && conf <= 1) {
			t.Fatalf("answer %q (conf %v) for context %q", a, conf, c)
		}
	})
}

func FuzzUnmarshal(f *testing.F) {
	train, _ := toyTopics()
	c, err := builtin.TrainClassifier(train[:16], builtin.ClassifierOptions{TextFields: []string{"text"}, Buckets: 32})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(marshal(f, c))
	bios, _ := toyBios()
	s, err := builtin.TrainSpanModel(bios[:2], builtin.SpanOptions{Buckets: 32})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(marshal(f, s))
	f.Fuzz(func(t *testing.T, data []byte) {
		if c, err := builtin.UnmarshalClassifier(data); err == nil {
			c.Predict(context.Background(), map[string]any{"text": "soup"})
		}
		if s, err := builtin.UnmarshalSpanModel(data); err == nil {
			s.Predict(context.Background(), map[string]any{"context": "Soup is hot.", "question": "What?"})
		}
	})
}
