package dynalab_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/dynalab"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

var nli = spec.Spec{Kind: spec.Classification, Labels: []string{"entailed", "neutral", "contradictory"},
	LabelField: "label", ProbField: "prob", TextFields: []string{"context", "hypothesis"}}

var qa = spec.Spec{Kind: spec.ExtractiveQA, AnswerField: "answer", ConfField: "conf", ContextField: "context",
	QuestionField: "question", TextFields: []string{"context", "question"}}

// model is a Dynalab server whose answer to one sample the test decides.
type model struct {
	answer func(sample map[string]any) any
	// batch, when set, answers a whole batch (to send wrong shapes).
	batch func(samples []map[string]any) any

	mu      sync.Mutex
	batches []int // sizes of the batches received
}

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "want a JSON POST", 405)
		return
	}
	var out any
	switch r.URL.Path {
	case dynalab.SinglePath:
		var sample map[string]any
		if err := json.NewDecoder(r.Body).Decode(&sample); err != nil {
			http.Error(w, err.Error(), 422)
			return
		}
		out = m.answer(sample)
	case dynalab.BatchPath:
		var req struct {
			Samples []map[string]any `json:"dataset_samples"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Samples == nil {
			http.Error(w, "want dataset_samples", 422)
			return
		}
		m.mu.Lock()
		m.batches = append(m.batches, len(req.Samples))
		m.mu.Unlock()
		if m.batch != nil {
			out = m.batch(req.Samples)
			break
		}
		list := make([]any, len(req.Samples))
		for i, s := range req.Samples {
			list[i] = m.answer(s)
		}
		out = list
	default:
		http.NotFound(w, r)
		return
	}
	if raw, ok := out.(string); ok {
		_, _ = io.WriteString(w, raw)
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

func start(t testing.TB, m *model, opts map[string]any, sp spec.Spec) *dynalab.Predictor {
	t.Helper()
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	p, err := dynalab.New(&dynabench.Model{ID: 1, Kind: dynabench.KindDynalab, URL: srv.URL, Options: opts}, sp,
		httpx.Options{Timeout: 10 * time.Second, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// byHypothesis labels "h<i>" with the i-th label (mod 3), so the order of answers can be checked.
func byHypothesis(s map[string]any) any {
	var i int
	_, _ = fmt.Sscanf(fmt.Sprint(s["hypothesis"]), "h%d", &i)
	return map[string]any{"label": nli.Labels[i%3], "prob": map[string]any{"entailed": "0.2", "neutral": 0.3, "contradictory": 0.4},
		"id": s["uid"]}
}

func TestPredict(t *testing.T) {
	t.Parallel()
	p := start(t, &model{answer: byHypothesis}, nil, nli)
	out, err := p.Predict(context.Background(), map[string]any{"context": "c", "hypothesis": "h1", "uid": "u1"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"label": "neutral", "prob": map[string]any{"entailed": 0.2, "neutral": 0.3, "contradictory": 0.4}, "id": "u1"}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("Predict = %v, want %v", out, want)
	}
}

func TestPredictQA(t *testing.T) {
	t.Parallel()
	p := start(t, &model{answer: func(s map[string]any) any {
		return map[string]any{"answer": strings.Fields(s["context"].(string))[0], "conf": 0.7}
	}}, nil, qa)
	out, err := p.Predict(context.Background(), map[string]any{"context": "Paris is big", "question": "what?"})
	if err != nil || out["answer"] != "Paris" || out["conf"] != 0.7 {
		t.Errorf("Predict = %v, %v", out, err)
	}
}

func TestPredictBatchSplitsAndKeepsOrder(t *testing.T) {
	t.Parallel()
	m := &model{answer: byHypothesis}
	p := start(t, m, map[string]any{"batch_size": 4, "max_concurrency": 2}, nli)
	inputs := make([]map[string]any, 10)
	for i := range inputs {
		inputs[i] = map[string]any{"context": "c", "hypothesis": fmt.Sprintf("h%d", i)}
	}
	out, err := p.PredictBatch(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if o["label"] != nli.Labels[i%3] {
			t.Errorf("answer %d = %v", i, o)
		}
	}
	m.mu.Lock()
	sizes := fmt.Sprint(m.batches)
	m.mu.Unlock()
	if len(m.batches) != 3 || !strings.Contains(sizes, "2") || strings.Count(sizes, "4") != 2 {
		t.Errorf("batch sizes %s, want 4, 4, 2", sizes)
	}
	if out, err := p.PredictBatch(context.Background(), nil); err != nil || len(out) != 0 {
		t.Errorf("empty batch: %v, %v", out, err)
	}
}

func TestInvalidAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		answer  any
		problem string
	}{
		{"malformed JSON", `{"label": "neutral"`, "malformed JSON"},
		{"not an object", `"neutral"`, "the answer is a string, want a JSON object"},
		{"a list of two", `[{"label": "neutral"}, {"label": "neutral"}]`, "the answer is a list"},
		{"null", `null`, "the answer is null"},
		{"label outside the set", map[string]any{"label": "maybe"}, `label "maybe" is not one of`},
		{"label missing", map[string]any{"answer": "neutral"}, "no label in the answer"},
		{"prob garbage", map[string]any{"label": "neutral", "prob": map[string]any{"neutral": "lots"}}, `"lots" is not a number`},
		{"empty body", "", "malformed JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := start(t, &model{answer: func(map[string]any) any { return tt.answer }}, nil, nli)
			_, err := p.Predict(context.Background(), map[string]any{"hypothesis": "h"})
			var me *dynabench.ModelError
			if !errors.As(err, &me) || me.Kind != dynabench.ModelInvalidAnswer || !strings.Contains(err.Error(), tt.problem) {
				t.Fatalf("error %v, want invalid_answer with %q", err, tt.problem)
			}
			if !strings.Contains(err.Error(), "POST http://127.0.0.1") {
				t.Errorf("the message should say which call: %v", err)
			}
		})
	}
}

func TestOneElementListIsTolerated(t *testing.T) {
	t.Parallel()
	p := start(t, &model{answer: func(map[string]any) any { return `[{"label": "Neutral"}]` }}, nil, nli)
	out, err := p.Predict(context.Background(), map[string]any{"hypothesis": "h"})
	if err != nil || out["label"] != "neutral" {
		t.Errorf("Predict = %v, %v", out, err)
	}
}

func TestInvalidBatches(t *testing.T) {
	t.Parallel()
	good := map[string]any{"label": "neutral"}
	tests := []struct {
		name    string
		batch   func([]map[string]any) any
		problem string
	}{
		{"too short", func(s []map[string]any) any { return make([]any, len(s)-1) }, "3 answers for 4 samples"},
		{"too long", func(s []map[string]any) any { return make([]any, len(s)+1) }, "5 answers for 4 samples"},
		{"an object", func([]map[string]any) any { return good }, "the answer is an object, want a JSON list"},
		{"an item not an object", func([]map[string]any) any { return []any{good, good, "neutral", good} }, "answer 2 is a string"},
		{"an item with a bad label", func([]map[string]any) any {
			return []any{good, good, good, map[string]any{"label": "x"}}
		}, `answer 3: label "x" is not one of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := start(t, &model{batch: tt.batch}, nil, nli)
			_, err := p.PredictBatch(context.Background(), make([]map[string]any, 4))
			var me *dynabench.ModelError
			if !errors.As(err, &me) || me.Kind != dynabench.ModelInvalidAnswer || !strings.Contains(err.Error(), tt.problem) {
				t.Fatalf("error %v, want invalid_answer with %q", err, tt.problem)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	_, err := dynalab.New(&dynabench.Model{Kind: "dynalab", URL: "http://h", Options: map[string]any{"batch_size": 0}}, nli, httpx.Options{})
	var de *dynabench.Error
	if !errors.As(err, &de) || de.Field != "options.batch_size" {
		t.Errorf("error %v", err)
	}
}
