package hf_test

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
	"github.com/dynabench-go/dynabench/internal/adapters/hf"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

var nli = spec.Spec{Kind: spec.Classification, Labels: []string{"entailed", "neutral", "contradictory"},
	LabelField: "label", ProbField: "prob", TextFields: []string{"context", "hypothesis"}}

var sentiment = spec.Spec{Kind: spec.Classification, Labels: []string{"negative", "positive", "neutral"},
	LabelField: "label", ProbField: "prob", TextFields: []string{"context", "statement"}}

var qa = spec.Spec{Kind: spec.ExtractiveQA, AnswerField: "answer", ConfField: "conf", ContextField: "context",
	QuestionField: "question", TextFields: []string{"context", "question"}}

// endpoint is an inference endpoint: answer decides the reply to each body, which it keeps.
type endpoint struct {
	answer func(body map[string]any) any

	mu     sync.Mutex
	bodies []map[string]any
	auth   string
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error": "bad json"}`, 400)
		return
	}
	e.mu.Lock()
	e.bodies = append(e.bodies, body)
	e.auth = r.Header.Get("Authorization")
	e.mu.Unlock()
	out := e.answer(body)
	if s, ok := out.(string); ok {
		_, _ = w.Write([]byte(s))
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

func fixed(v any) func(map[string]any) any { return func(map[string]any) any { return v } }

func scores(pairs ...any) []any {
	var out []any
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, map[string]any{"label": pairs[i], "score": pairs[i+1]})
	}
	return out
}

func start(t *testing.T, e *endpoint, opts map[string]any, sp spec.Spec) *hf.Predictor {
	t.Helper()
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	p, err := hf.New(&dynabench.Model{ID: 1, Kind: dynabench.KindHF, URL: srv.URL + "/models/x", Options: opts}, sp,
		httpx.Options{Timeout: 10 * time.Second, LookupEnv: func(n string) (string, bool) { return "hf_token", n == "DYNABENCH_MODEL_HF" }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestPairClassification(t *testing.T) {
	t.Parallel()
	e := &endpoint{answer: fixed([]any{scores("ENTAILMENT", 0.7, "NEUTRAL", 0.2, "CONTRADICTION", 0.1)})}
	p := start(t, e, map[string]any{"api_key_env": "DYNABENCH_MODEL_HF",
		"label_map": map[string]any{"ENTAILMENT": "entailed", "neutral": "neutral", "CONTRADICTION": "contradictory"}}, nli)
	out, err := p.Predict(context.Background(), map[string]any{"context": "P", "hypothesis": "H", "statement": "H"})
	if err != nil {
		t.Fatal(err)
	}
	prob := out["prob"].(map[string]any)
	if out["label"] != "entailed" || !near(prob["entailed"].(float64), 0.7) || !near(prob["contradictory"].(float64), 0.1) {
		t.Errorf("Predict = %v", out)
	}
	inputs, _ := json.Marshal(e.bodies[0])
	if string(inputs) != `{"inputs":{"text":"P","text_pair":"H"}}` || e.auth != "Bearer hf_token" {
		t.Errorf("body %s, auth %q", inputs, e.auth)
	}
}

func TestSingleTextAndShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer any
		label  string
		prob   map[string]float64
	}{
		{"list", scores("Positive", 0.6, "negative", 0.3, "NEUTRAL", 0.1), "positive", map[string]float64{"positive": 0.6, "negative": 0.3}},
		{"nested", []any{scores("positive", 0.2, "negative", 0.8)}, "negative", map[string]float64{"negative": 0.8, "neutral": 0}},
		{"top label only", map[string]any{"label": "neutral", "score": 0.5}, "neutral", map[string]float64{"neutral": 1, "positive": 0}},
		{"unnormalised", scores("positive", 0.2, "negative", 0.2), "negative", map[string]float64{"positive": 0.5, "negative": 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := &endpoint{answer: fixed(tt.answer)}
			p := start(t, e, map[string]any{"text_fields": []any{"statement"}, "parameters": map[string]any{"top_k": 3}}, sentiment)
			out, err := p.Predict(context.Background(), map[string]any{"context": "c", "statement": "great film"})
			if err != nil {
				t.Fatal(err)
			}
			if out["label"] != tt.label {
				t.Errorf("label %v, want %s", out["label"], tt.label)
			}
			prob := out["prob"].(map[string]any)
			for l, want := range tt.prob {
				if !near(prob[l].(float64), want) {
					t.Errorf("prob[%s] = %v, want %v", l, prob[l], want)
				}
			}
			body, _ := json.Marshal(e.bodies[0])
			if string(body) != `{"inputs":"great film","parameters":{"top_k":3}}` {
				t.Errorf("body %s", body)
			}
		})
	}
}

func assertInvalid(t *testing.T, err error, problem string) {
	t.Helper()
	var me *dynabench.ModelError
	if !errors.As(err, &me) || me.Kind != dynabench.ModelInvalidAnswer || !strings.Contains(err.Error(), problem) {
		t.Fatalf("error %v, want invalid_answer with %q", err, problem)
	}
}

func TestInvalidAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		answer  any
		problem string
	}{
		{"label outside the set", scores("LABEL_7", 0.9), `the label "LABEL_7" is not one of`},
		{"score garbage", scores("positive", "high"), `"high" is not a number`},
		{"score a logit", scores("positive", 3.2), "outside [0, 1]"},
		{"all zero", scores("positive", 0.0), "every task label scored zero"},
		{"empty list", []any{}, "no labels"},
		{"a string", `"positive"`, "a score is a string"},
		{"malformed", `[{"label": `, "malformed JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := start(t, &endpoint{answer: fixed(tt.answer)}, map[string]any{"text_fields": []any{"statement"}}, sentiment)
			_, err := p.Predict(context.Background(), map[string]any{"statement": "s"})
			assertInvalid(t, err, tt.problem)
		})
	}
}

func TestLabelMapDropsLabels(t *testing.T) {
	t.Parallel()
	p := start(t, &endpoint{answer: fixed(scores("LABEL_0", 0.2, "LABEL_1", 0.5, "LABEL_2", 0.3))},
		map[string]any{"text_fields": []any{"statement"}, "label_map": map[string]any{"label_0": "negative", "LABEL_1": "", "LABEL_2": "Positive"}}, sentiment)
	out, err := p.Predict(context.Background(), map[string]any{"statement": "s"})
	if err != nil || out["label"] != "positive" || !near(out["prob"].(map[string]any)["positive"].(float64), 0.6) {
		t.Errorf("Predict = %v, %v", out, err)
	}
}

func TestBatch(t *testing.T) {
	t.Parallel()
	e := &endpoint{answer: func(body map[string]any) any {
		var out []any
		for _, in := range body["inputs"].([]any) {
			label := "negative"
			if strings.Contains(in.(string), "good") {
				label = "positive"
			}
			out = append(out, scores(label, 0.9))
		}
		return out
	}}
	p := start(t, e, map[string]any{"text_fields": []any{"statement"}, "batch_size": 2}, sentiment)
	out, err := p.PredictBatch(context.Background(), []map[string]any{{"statement": "good"}, {"statement": "bad"}, {"statement": "good"}})
	if err != nil || out[0]["label"] != "positive" || out[1]["label"] != "negative" || out[2]["label"] != "positive" {
		t.Fatalf("PredictBatch = %v, %v", out, err)
	}
	if len(e.bodies) != 2 {
		t.Errorf("%d calls, want 2", len(e.bodies))
	}

	wrong := start(t, &endpoint{answer: fixed([]any{scores("positive", 1.0)})}, map[string]any{"text_fields": []any{"statement"}}, sentiment)
	_, err = wrong.PredictBatch(context.Background(), []map[string]any{{"statement": "a"}, {"statement": "b"}})
	assertInvalid(t, err, "1 answers for 2 inputs")
}

func TestQA(t *testing.T) {
	t.Parallel()
	e := &endpoint{answer: fixed(map[string]any{"answer": "Paris", "score": 0.83, "start": 23, "end": 28})}
	p := start(t, e, nil, qa)
	out, err := p.Predict(context.Background(), map[string]any{"context": "The Eiffel Tower is in Paris.", "question": "Where?"})
	if err != nil || out["answer"] != "Paris" || out["conf"] != 0.83 {
		t.Fatalf("Predict = %v, %v", out, err)
	}
	body, _ := json.Marshal(e.bodies[0])
	if string(body) != `{"inputs":{"context":"The Eiffel Tower is in Paris.","question":"Where?"}}` {
		t.Errorf("body %s", body)
	}
	bad := start(t, &endpoint{answer: fixed(map[string]any{"answer": 3})}, nil, qa)
	_, err = bad.Predict(context.Background(), map[string]any{"context": "c", "question": "q"})
	assertInvalid(t, err, "answer is a number")

	top := start(t, &endpoint{answer: fixed([]any{map[string]any{"answer": "a", "score": 0.5}, map[string]any{"answer": "b", "score": 0.2}})}, nil, qa)
	out, err = top.Predict(context.Background(), map[string]any{"context": "a b", "question": "q"})
	if err != nil || out["answer"] != "a" {
		t.Errorf("top-k list: %v, %v", out, err)
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		opts  map[string]any
		sp    spec.Spec
		field string
	}{
		{map[string]any{"label_map": map[string]any{"LABEL_0": "bad"}}, nli, "options.label_map.LABEL_0"},
		{map[string]any{"text_fields": []any{"a", "b", "c"}}, nli, "options.text_fields"},
		{map[string]any{"parameters": "top_k=3"}, nli, "options.parameters"},
		{nil, spec.Spec{LabelField: "tags"}, "kind"},
	}
	for _, tt := range tests {
		_, err := hf.New(&dynabench.Model{Kind: "hf", URL: "http://h/", Options: tt.opts}, tt.sp, httpx.Options{})
		var de *dynabench.Error
		if !errors.As(err, &de) || de.Field != tt.field {
			t.Errorf("options %v: error %v, want field %s", tt.opts, err, tt.field)
		}
	}
}
