// Package demo holds the platform's four built-in demo tasks (sentiment, NLI, QA and hate speech), written
// for this project: each task's Dynabench config, its contexts for annotators, and a labelled seed set
// that trains the built-in model-in-the-loop at start-up, so the whole loop runs offline.
package demo

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/builtin"
)

//go:embed data
var data embed.FS

// Task is one demo task as shipped.
type Task struct {
	Code, Name, Description string
	// Config is the task config, YAML in Dynabench's format.
	Config []byte
	// Contexts are what annotators write against, one per example.
	Contexts []ContextRow
	// Seed is the labelled set the built-in model trains on before any round has data.
	Seed []builtin.TrainingExample
}

// ContextRow is one line of a contexts.jsonl file, the format the context upload takes.
type ContextRow struct {
	Context  map[string]any `json:"context"`
	Tag      string         `json:"tag"`
	Metadata map[string]any `json:"metadata"`
}

// spec says what the Go code needs to know of a task beyond its files: how its model reads and answers.
type spec struct {
	code, name, description string
	labels                  []string // nil for QA
	classifier              builtin.ClassifierOptions
}

var specs = []spec{
	{
		code: "sentiment", name: "Sentiment Analysis",
		description: "Write a statement whose sentiment (positive, negative or neutral) the model gets wrong.",
		labels:      []string{"positive", "negative", "neutral"},
		classifier:  builtin.ClassifierOptions{TextFields: []string{"statement"}},
	},
	{
		code: "nli", name: "Natural Language Inference",
		description: "Given a premise, write a hypothesis that is entailed by it, neutral to it, or contradicts " +
			"it, and that the model classifies wrongly.",
		labels:     []string{"entailed", "neutral", "contradictory"},
		classifier: builtin.ClassifierOptions{PremiseField: "context", HypothesisField: "hypothesis"},
	},
	{
		code: "qa", name: "Question Answering",
		description: "Ask a question about a passage and select its answer in the passage, so that the model " +
			"answers something else.",
	},
	{
		code: "hs", name: "Hate Speech",
		description: "Write a statement that is hateful, or not, that the model labels wrongly. Contains " +
			"offensive language; groups are written as [GROUP].",
		labels:     []string{"hateful", "not-hateful"},
		classifier: builtin.ClassifierOptions{TextFields: []string{"statement"}},
	},
}

// Tasks returns the four demo tasks in order: sentiment, nli, qa, hs.
func Tasks() ([]Task, error) {
	tasks := make([]Task, 0, len(specs))
	for _, s := range specs {
		t, err := load(s)
		if err != nil {
			return nil, fmt.Errorf("demo task %s: %w", s.code, err)
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

func load(s spec) (Task, error) {
	t := Task{Code: s.code, Name: s.name, Description: s.description}
	var err error
	dir := path.Join("data", s.code)
	if t.Config, err = data.ReadFile(path.Join(dir, "config.yaml")); err != nil {
		return Task{}, err
	}
	if t.Contexts, err = readJSONL[ContextRow](path.Join(dir, "contexts.jsonl")); err != nil {
		return Task{}, err
	}
	seed, err := readJSONL[seedRow](path.Join(dir, "seed.jsonl"))
	if err != nil {
		return Task{}, err
	}
	for _, r := range seed {
		t.Seed = append(t.Seed, builtin.TrainingExample{Input: r.Input, Label: r.Label})
	}
	return t, nil
}

// seedRow is one line of a seed.jsonl file: the model's input fields and the gold label (for QA, the
// answer text).
type seedRow struct {
	Input map[string]any `json:"input"`
	Label string         `json:"label"`
}

// readJSONL decodes one T per non-empty line of an embedded file.
func readJSONL[T any](name string) ([]T, error) {
	b, err := data.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// Names of the built-in models, by kind; the version changes when features or training change.
const (
	ClassifierModelName = "builtin-logreg-v1"
	SpanModelName       = "builtin-span-v1"
)

// DevEvery puts every DevEvery-th seed example in the dev split: held out from the built-in model's
// training and uploaded as the task's "demo-dev" evaluation dataset, so the first leaderboard
// scores the model on examples it never saw.
const DevEvery = 5

// TrainDev splits the seed set: train (what the built-in model learns from) and dev (held out).
func (t Task) TrainDev() (train, dev []builtin.TrainingExample) {
	for i, e := range t.Seed {
		if i%DevEvery == DevEvery-1 {
			dev = append(dev, e)
		} else {
			train = append(train, e)
		}
	}
	return train, dev
}

// TrainModel trains the task's built-in model on the train part of its seed set (TrainDev): the span
// model for QA, the classifier otherwise. It returns the model and its name.
func TrainModel(t Task, seed uint64) (dynabench.Predictor, string, error) {
	train, _ := t.TrainDev()
	s, ok := specByCode(t.Code)
	if !ok {
		return nil, "", fmt.Errorf("demo: no built-in model for task %q", t.Code)
	}
	if s.labels == nil {
		m, err := builtin.TrainSpanModel(train, builtin.SpanOptions{Seed: seed})
		if err != nil {
			return nil, "", fmt.Errorf("demo task %s: %w", t.Code, err)
		}
		return m, SpanModelName, nil
	}
	o := s.classifier
	o.Labels, o.Seed = s.labels, seed
	m, err := builtin.TrainClassifier(train, o)
	if err != nil {
		return nil, "", fmt.Errorf("demo task %s: %w", t.Code, err)
	}
	return m, ClassifierModelName, nil
}

// Labels returns the label set of a demo task's classifier, or nil for QA and unknown codes.
func Labels(code string) []string {
	s, _ := specByCode(code)
	return append([]string(nil), s.labels...)
}

func specByCode(code string) (spec, bool) {
	for _, s := range specs {
		if s.code == code {
			return s, true
		}
	}
	return spec{}, false
}

// BaselineModelName names the demo tasks' trivial baseline.
const BaselineModelName = "prior-baseline-v1"

// Baseline is the trivial baseline a leaderboard needs for scale: for label tasks it always answers
// the most frequent label of the train split, with the split's label frequencies as probabilities;
// for QA it answers the context's first five words.
func Baseline(t Task) dynabench.Predictor {
	train, _ := t.TrainDev()
	s, _ := specByCode(t.Code)
	if s.labels == nil {
		return baseline{answer: true}
	}
	counts := map[string]int{}
	for _, e := range train {
		counts[e.Label]++
	}
	b := baseline{prob: map[string]any{}}
	best := -1
	for _, l := range s.labels {
		b.prob[l] = float64(counts[l]) / float64(max(len(train), 1))
		if counts[l] > best {
			b.label, best = l, counts[l]
		}
	}
	return b
}

type baseline struct {
	answer bool // QA: the context's first words
	label  string
	prob   map[string]any
}

func (b baseline) Predict(_ context.Context, in map[string]any) (map[string]any, error) {
	if b.answer {
		ctx, _ := in["context"].(string)
		words := strings.Fields(ctx)
		return map[string]any{"answer": strings.Join(words[:min(5, len(words))], " ")}, nil
	}
	prob := make(map[string]any, len(b.prob))
	for k, v := range b.prob {
		prob[k] = v
	}
	return map[string]any{"label": b.label, "prob": prob}, nil
}

func (b baseline) PredictBatch(ctx context.Context, ins []map[string]any) ([]map[string]any, error) {
	out := make([]map[string]any, len(ins))
	for i, in := range ins {
		out[i], _ = b.Predict(ctx, in)
	}
	return out, nil
}

// MemoryBytes: the baseline holds a label and its probabilities.
func (b baseline) MemoryBytes() int64 { return int64(64 + 32*len(b.prob)) }
