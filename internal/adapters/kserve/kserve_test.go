package kserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
	"github.com/dynabench-go/dynabench/internal/adapters/kserve"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

var nli = spec.Spec{Kind: spec.Classification, Labels: []string{"entailed", "neutral", "contradictory"},
	LabelField: "label", ProbField: "prob", TextFields: []string{"context", "hypothesis"}}

var qa = spec.Spec{Kind: spec.ExtractiveQA, AnswerField: "answer", ConfField: "conf", ContextField: "context",
	QuestionField: "question", TextFields: []string{"context", "question"}}

type tensor struct {
	Name     string   `json:"name"`
	Shape    []int    `json:"shape"`
	Datatype string   `json:"datatype"`
	Data     []string `json:"data"`
}

// triton is an Open Inference Protocol v2 server: infer decides the outputs for the request's inputs.
type triton struct {
	infer func(inputs map[string][]string) any
	ready bool

	mu   sync.Mutex
	reqs []map[string]any
}

func (s *triton) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v2/health/ready":
		if !s.ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		return
	case r.Method != http.MethodPost || r.URL.Path != "/v2/models/nli-roberta/infer":
		http.Error(w, `{"error": "unknown model"}`, 404)
		return
	}
	var req struct {
		Inputs []tensor `json:"inputs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error": "bad request"}`, 400)
		return
	}
	inputs := map[string][]string{}
	for _, t := range req.Inputs {
		if t.Datatype != "BYTES" || len(t.Shape) != 1 || t.Shape[0] != len(t.Data) {
			http.Error(w, `{"error": "bad tensor"}`, 400)
			return
		}
		inputs[t.Name] = t.Data
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, map[string]any{"inputs": req.Inputs})
	s.mu.Unlock()
	out := s.infer(inputs)
	if str, ok := out.(string); ok {
		_, _ = w.Write([]byte(str))
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"model_name": "nli-roberta", "outputs": out})
}

func start(t *testing.T, s *triton, opts map[string]any, sp spec.Spec) *kserve.Predictor {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	all := map[string]any{"model_name": "nli-roberta"}
	for k, v := range opts {
		all[k] = v
	}
	p, err := kserve.New(&dynabench.Model{ID: 1, Kind: dynabench.KindKServe, URL: srv.URL, Options: all}, sp,
		httpx.Options{Timeout: 10 * time.Second, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// byHypothesis answers, per input, probabilities in column order [contradictory, neutral, entailed]
// favouring the label named in the hypothesis, and that label.
func byHypothesis(in map[string][]string) any {
	order := []string{"contradictory", "neutral", "entailed"}
	var labels []string
	var probs []float64
	for _, h := range in["text_b"] {
		for _, l := range order {
			p := 0.1
			if strings.Contains(h, l) {
				p = 0.8
			}
			probs = append(probs, p)
		}
		labels = append(labels, strings.ToUpper(strings.Fields(h)[0]))
	}
	n := len(labels)
	return []any{
		map[string]any{"name": "probs", "shape": []int{n, 3}, "datatype": "FP32", "data": probs},
		map[string]any{"name": "label", "shape": []int{n}, "datatype": "BYTES", "data": labels},
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestInferBatch(t *testing.T) {
	t.Parallel()
	s := &triton{infer: byHypothesis}
	p := start(t, s, map[string]any{"input_names": map[string]any{"context": "text_a", "hypothesis": "text_b"},
		"output_probs": "probs", "output_label": "label", "label_order": []any{"contradictory", "neutral", "entailed"}}, nli)
	inputs := []map[string]any{
		{"context": "p1", "hypothesis": "neutral it is"},
		{"context": "p2", "hypothesis": "entailed surely"},
		{"context": "p3", "hypothesis": "contradictory no"},
	}
	out, err := p.PredictBatch(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"neutral", "entailed", "contradictory"} {
		prob := out[i]["prob"].(map[string]any)
		if out[i]["label"] != want || !near(prob[want].(float64), 0.8) {
			t.Errorf("answer %d = %v, want %s at 0.8", i, out[i], want)
		}
	}
	if len(s.reqs) != 1 {
		t.Errorf("%d requests, want one for the batch", len(s.reqs))
	}
	got, _ := json.Marshal(s.reqs[0]["inputs"])
	want := `[{"name":"text_a","shape":[3],"datatype":"BYTES","data":["p1","p2","p3"]},` +
		`{"name":"text_b","shape":[3],"datatype":"BYTES","data":["neutral it is","entailed surely","contradictory no"]}]`
	if string(got) != want {
		t.Errorf("inputs %s\nwant   %s", got, want)
	}
}

func TestProbsOnlyAndNestedData(t *testing.T) {
	t.Parallel()
	s := &triton{infer: func(in map[string][]string) any {
		return []any{map[string]any{"name": "logits_softmax", "shape": []int{1, 3}, "datatype": "FP32", "data": [][]float64{{0.2, 0.5, 0.3}}}}
	}}
	p := start(t, s, map[string]any{"output_probs": "logits_softmax"}, nli)
	out, err := p.Predict(context.Background(), map[string]any{"context": "p", "hypothesis": "h"})
	if err != nil || out["label"] != "neutral" || !near(out["prob"].(map[string]any)["contradictory"].(float64), 0.3) {
		t.Errorf("Predict = %v, %v", out, err)
	}
}

func TestLabelIndices(t *testing.T) {
	t.Parallel()
	s := &triton{infer: func(in map[string][]string) any {
		return []any{map[string]any{"name": "class", "shape": []int{2}, "datatype": "INT64", "data": []int{2, 0}}}
	}}
	p := start(t, s, map[string]any{"output_label": "class"}, nli)
	out, err := p.PredictBatch(context.Background(), []map[string]any{{}, {}})
	if err != nil || out[0]["label"] != "contradictory" || out[1]["label"] != "entailed" {
		t.Errorf("PredictBatch = %v, %v", out, err)
	}
}

func assertInvalid(t *testing.T, err error, problem string) {
	t.Helper()
	var me *dynabench.ModelError
	if !errors.As(err, &me) || me.Kind != dynabench.ModelInvalidAnswer || !strings.Contains(err.Error(), problem) {
		t.Fatalf("error %v, want invalid_answer with %q", err, problem)
	}
}

func TestWrongShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		outputs any
		problem string
	}{
		{"missing tensor", []any{map[string]any{"name": "other", "data": []int{1}}}, `no output tensor "probs" (the answer has "other")`},
		{"too few probabilities", []any{map[string]any{"name": "probs", "shape": []int{2, 2}, "data": []float64{0.5, 0.5, 0.5, 0.5}}},
			`has 4 values, want 6 (2 inputs × 3 labels)`},
		{"shape disagrees", []any{map[string]any{"name": "probs", "shape": []int{3, 3}, "data": []float64{1, 0, 0, 1, 0, 0}}}, "shape [3 3] but 6 values"},
		{"logits", []any{map[string]any{"name": "probs", "shape": []int{2, 3}, "data": []float64{-1.2, 2, 0.3, 1, 0, 0}}}, "want probabilities, not logits"},
		{"strings for floats", []any{map[string]any{"name": "probs", "shape": []int{2, 3}, "data": []any{"a", 0, 0, 1, 0, 0}}}, `"a" is not a number`},
		{"no data", []any{map[string]any{"name": "probs", "shape": []int{2, 3}}}, "no data list"},
		{"all zero", []any{map[string]any{"name": "probs", "shape": []int{2, 3}, "data": []float64{0, 0, 0, 1, 0, 0}}}, "every probability of input 0 is zero"},
		{"malformed", `{"outputs": [`, "malformed inference response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := start(t, &triton{infer: func(map[string][]string) any { return tt.outputs }}, map[string]any{"output_probs": "probs"}, nli)
			_, err := p.PredictBatch(context.Background(), []map[string]any{{}, {}})
			assertInvalid(t, err, tt.problem)
		})
	}
	bad := start(t, &triton{infer: func(map[string][]string) any {
		return []any{map[string]any{"name": "label", "data": []string{"maybe"}}}
	}}, map[string]any{"output_label": "label"}, nli)
	_, err := bad.Predict(context.Background(), map[string]any{})
	assertInvalid(t, err, `label[0] "maybe" is not one of`)
}

func TestQA(t *testing.T) {
	t.Parallel()
	s := &triton{infer: func(in map[string][]string) any {
		return []any{
			map[string]any{"name": "answer", "shape": []int{1}, "datatype": "BYTES", "data": []string{strings.Fields(in["context"][0])[0]}},
			map[string]any{"name": "score", "shape": []int{1}, "datatype": "FP32", "data": []float64{0.75}},
		}
	}}
	p := start(t, s, map[string]any{"output_answer": "answer", "output_conf": "score"}, qa)
	out, err := p.Predict(context.Background(), map[string]any{"context": "Paris is big", "question": "q"})
	if err != nil || out["answer"] != "Paris" || out["conf"] != 0.75 {
		t.Errorf("Predict = %v, %v", out, err)
	}
}

func TestReady(t *testing.T) {
	t.Parallel()
	s := &triton{}
	p := start(t, s, map[string]any{"output_label": "label", "max_retries": 0}, nli)
	var me *dynabench.ModelError
	if err := p.Ready(context.Background()); !errors.As(err, &me) || me.Kind != dynabench.ModelBadStatus {
		t.Errorf("not ready: %v", err)
	}
	p2 := start(t, &triton{ready: true}, map[string]any{"output_label": "label"}, nli)
	if err := p2.Ready(context.Background()); err != nil {
		t.Errorf("ready: %v", err)
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		opts  map[string]any
		sp    spec.Spec
		field string
	}{
		{map[string]any{"output_label": "l"}, nli, "options.model_name"},
		{map[string]any{"model_name": "m"}, nli, "options.output_label"},
		{map[string]any{"model_name": "m", "output_probs": "p", "label_order": []any{"entailed", "maybe"}}, nli, "options.label_order"},
		{map[string]any{"model_name": "m", "output_probs": "p", "input_names": map[string]any{"premise": "x"}}, nli, "options.input_names.premise"},
		{map[string]any{"model_name": "m"}, qa, "options.output_answer"},
	}
	for _, tt := range tests {
		_, err := kserve.New(&dynabench.Model{Kind: "kserve", URL: "http://h/", Options: tt.opts}, tt.sp, httpx.Options{})
		var de *dynabench.Error
		if !errors.As(err, &de) || de.Field != tt.field {
			t.Errorf("options %v: error %v, want field %s", tt.opts, err, tt.field)
		}
	}
}
