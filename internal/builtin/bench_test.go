package builtin_test

import (
	"context"
	"testing"

	"github.com/dynabench-go/dynabench/internal/builtin"
)

func BenchmarkClassifierPredict(b *testing.B) {
	task := demoTask(b, "sentiment")
	c, err := builtin.TrainClassifier(task.Seed, builtin.ClassifierOptions{TextFields: []string{"statement"}})
	if err != nil {
		b.Fatal(err)
	}
	in := map[string]any{"statement": "The staff were friendly, but honestly the food was not worth the forty-minute wait."}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Predict(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClassifierPredictNLI(b *testing.B) {
	task := demoTask(b, "nli")
	c, err := builtin.TrainClassifier(task.Seed, builtin.ClassifierOptions{PremiseField: "context", HypothesisField: "hypothesis"})
	if err != nil {
		b.Fatal(err)
	}
	in := task.Contexts[0].Context
	in = map[string]any{"context": in["context"], "hypothesis": "Nobody is waiting for the bus in the rain."}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Predict(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpanPredict answers a question about a five-sentence demo paragraph (about 70 words).
func BenchmarkSpanPredict(b *testing.B) {
	task := demoTask(b, "qa")
	m, err := builtin.TrainSpanModel(task.Seed, builtin.SpanOptions{})
	if err != nil {
		b.Fatal(err)
	}
	in := map[string]any{"context": task.Contexts[0].Context["context"], "question": "Which town is known for smoked trout?"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Predict(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTrainClassifier trains on the sentiment seed set (about 300 examples), as at start-up.
func BenchmarkTrainClassifier(b *testing.B) {
	task := demoTask(b, "sentiment")
	for b.Loop() {
		if _, err := builtin.TrainClassifier(task.Seed, builtin.ClassifierOptions{TextFields: []string{"statement"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTrainClassifierNLI trains on the NLI seed set (about 300 pairs).
func BenchmarkTrainClassifierNLI(b *testing.B) {
	task := demoTask(b, "nli")
	for b.Loop() {
		if _, err := builtin.TrainClassifier(task.Seed, builtin.ClassifierOptions{PremiseField: "context", HypothesisField: "hypothesis"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTrainSpan trains on the QA seed set (160 questions).
func BenchmarkTrainSpan(b *testing.B) {
	task := demoTask(b, "qa")
	for b.Loop() {
		if _, err := builtin.TrainSpanModel(task.Seed, builtin.SpanOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
