package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
	"github.com/dynabench-go/dynabench/internal/adapters/openai"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

var nli = spec.Spec{Kind: spec.Classification, Labels: []string{"entailed", "neutral", "contradictory"},
	LabelField: "label", ProbField: "prob", TextFields: []string{"context", "hypothesis"}}

var qa = spec.Spec{Kind: spec.ExtractiveQA, AnswerField: "answer", ConfField: "conf", ContextField: "context",
	QuestionField: "question", TextFields: []string{"context", "question"}}

// chat is a chat-completions server: reply decides the JSON answer to each request, which it keeps.
type chat struct {
	reply func(req map[string]any) any

	mu   sync.Mutex
	reqs []map[string]any
	auth []string
}

func (c *chat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	c.auth = append(c.auth, r.Header.Get("Authorization"))
	c.mu.Unlock()
	out := c.reply(req)
	if s, ok := out.(string); ok {
		_, _ = w.Write([]byte(s))
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (c *chat) last() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reqs[len(c.reqs)-1]
}

// says answers every request with text (and logprobs when given).
func says(text string, logprobs ...map[string]any) func(map[string]any) any {
	return func(map[string]any) any {
		choice := map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}
		if len(logprobs) > 0 {
			choice["logprobs"] = map[string]any{"content": logprobs}
		}
		return map[string]any{"id": "x", "object": "chat.completion", "choices": []any{choice}}
	}
}

func token(tok string, p float64, alts ...any) map[string]any {
	top := []any{map[string]any{"token": tok, "logprob": math.Log(p)}}
	for i := 0; i < len(alts); i += 2 {
		top = append(top, map[string]any{"token": alts[i], "logprob": math.Log(alts[i+1].(float64))})
	}
	return map[string]any{"token": tok, "logprob": math.Log(p), "top_logprobs": top}
}

func start(t *testing.T, c *chat, opts map[string]any, sp spec.Spec) (*openai.Predictor, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	if opts == nil {
		opts = map[string]any{}
	}
	if _, ok := opts["model"]; !ok {
		opts["model"] = "llama-3-8b"
	}
	p, err := openai.New(&dynabench.Model{ID: 1, Kind: dynabench.KindOpenAI, URL: srv.URL + "/v1", Options: opts}, sp,
		httpx.Options{Timeout: 10 * time.Second, LookupEnv: func(n string) (string, bool) { return "sk-abc", n == "DYNABENCH_MODEL_LLM" }})
	if err != nil {
		t.Fatal(err)
	}
	return p, srv
}

var pair = map[string]any{"context": "A man plays a guitar.", "hypothesis": "Someone makes music.", "statement": "Someone makes music."}

func TestRequestAndPrompt(t *testing.T) {
	t.Parallel()
	c := &chat{reply: says("Entailed.")}
	p, _ := start(t, c, map[string]any{"api_key_env": "DYNABENCH_MODEL_LLM"}, nli)
	out, err := p.Predict(context.Background(), pair)
	if err != nil || out["label"] != "entailed" {
		t.Fatalf("Predict = %v, %v", out, err)
	}
	if _, has := out["prob"]; has {
		t.Errorf("prob without logprobs: %v (the answer must stand alone)", out)
	}
	req := c.last()
	msgs := req["messages"].([]any)
	user := msgs[1].(map[string]any)["content"]
	wantUser := "context: A man plays a guitar.\nhypothesis: Someone makes music.\n\nAnswer with exactly one of: entailed, neutral, contradictory"
	if req["model"] != "llama-3-8b" || req["temperature"] != 0.0 || req["max_tokens"] != 64.0 || req["stream"] != false ||
		msgs[0].(map[string]any)["role"] != "system" || user != wantUser || req["logprobs"] != nil {
		t.Errorf("request %v\nuser %q", req, user)
	}
	if c.auth[0] != "Bearer sk-abc" {
		t.Errorf("Authorization %q", c.auth[0])
	}
}

func TestPromptOverride(t *testing.T) {
	t.Parallel()
	c := &chat{reply: says("neutral")}
	p, _ := start(t, c, map[string]any{"prompt": "P: {context}\nH: {hypothesis}\nPick from {labels}.", "system": "", "temperature": 0.5,
		"max_tokens": 5}, nli)
	in := map[string]any{"context": "x {hypothesis} y", "hypothesis": "I wrote {labels} here"}
	if _, err := p.Predict(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	req := c.last()
	msgs := req["messages"].([]any)
	want := "P: x {hypothesis} y\nH: I wrote {labels} here\nPick from entailed, neutral, contradictory."
	if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != want || req["temperature"] != 0.5 || req["max_tokens"] != 5.0 {
		t.Errorf("request %v", req)
	}
}

func TestLogprobs(t *testing.T) {
	t.Parallel()
	c := &chat{reply: says("entailed", token("ent", 0.6, "neutral", 0.3, "cont", 0.05, "I", 0.05), token("ailed", 0.99))}
	p, _ := start(t, c, map[string]any{"logprobs": true}, nli)
	out, err := p.Predict(context.Background(), pair)
	if err != nil {
		t.Fatal(err)
	}
	if req := c.last(); req["logprobs"] != true || req["top_logprobs"] != 5.0 {
		t.Errorf("request %v", req)
	}
	prob := out["prob"].(map[string]any)
	if math.Abs(prob["entailed"].(float64)-0.6/0.95) > 1e-9 || math.Abs(prob["neutral"].(float64)-0.3/0.95) > 1e-9 {
		t.Errorf("prob %v", prob)
	}

	// A server that ignores logprobs: the label stands alone.
	p2, _ := start(t, &chat{reply: says("neutral")}, map[string]any{"logprobs": true}, nli)
	out, err = p2.Predict(context.Background(), pair)
	if _, has := out["prob"]; err != nil || has || out["label"] != "neutral" {
		t.Errorf("Predict = %v, %v", out, err)
	}
}

func TestQA(t *testing.T) {
	t.Parallel()
	in := map[string]any{"context": "The Eiffel Tower is in Paris.", "question": "Where is it?"}
	c := &chat{reply: says("paris", token("par", 0.5), token("is", 0.8))}
	p, _ := start(t, c, map[string]any{"logprobs": true}, qa)
	out, err := p.Predict(context.Background(), in)
	if err != nil || out["answer"] != "Paris" || math.Abs(out["conf"].(float64)-0.4) > 1e-9 {
		t.Fatalf("Predict = %v, %v", out, err)
	}
	user := c.last()["messages"].([]any)[1].(map[string]any)["content"].(string)
	if user != "context: The Eiffel Tower is in Paris.\nquestion: Where is it?\n\nAnswer with a short span copied from the context." {
		t.Errorf("prompt %q", user)
	}

	p2, _ := start(t, &chat{reply: says("London")}, nil, qa)
	_, err = p2.Predict(context.Background(), in)
	assertInvalid(t, err, `reply "London" is not a span of the context`)

	p3, _ := start(t, &chat{reply: says("Paris")}, nil, qa)
	if out, err := p3.Predict(context.Background(), in); err != nil || out["conf"] != nil {
		t.Errorf("without logprobs: %v, %v (conf must be left out)", out, err)
	}
}

func assertInvalid(t *testing.T, err error, problem string) {
	t.Helper()
	var me *dynabench.ModelError
	if !errors.As(err, &me) || me.Kind != dynabench.ModelInvalidAnswer || !strings.Contains(err.Error(), problem) {
		t.Fatalf("error %v, want invalid_answer with %q", err, problem)
	}
}

func TestBadReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		answer  any
		problem string
	}{
		{"malformed", `{"choices": [`, "malformed chat completion"},
		{"no choices", map[string]any{"choices": []any{}}, "no choices"},
		{"error object", map[string]any{"error": map[string]any{"message": "model not loaded"}}, `answered an error: "model not loaded"`},
		{"null content", map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": nil}}}}, "no content"},
		{"number content", map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": 3}}}}, "neither text nor"},
		{"no label", says("I cannot help with that."), "names none of"},
		{"two labels", says("entailed or contradictory"), "names more than one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reply, ok := tt.answer.(func(map[string]any) any)
			if !ok {
				reply = func(map[string]any) any { return tt.answer }
			}
			p, _ := start(t, &chat{reply: reply}, nil, nli)
			_, err := p.Predict(context.Background(), pair)
			assertInvalid(t, err, tt.problem)
		})
	}
}

func TestContentParts(t *testing.T) {
	t.Parallel()
	p, _ := start(t, &chat{reply: func(map[string]any) any {
		return map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": []any{
			map[string]any{"type": "text", "text": "contra"}, map[string]any{"type": "text", "text": "dictory"}}}}}}
	}}, nil, nli)
	if out, err := p.Predict(context.Background(), pair); err != nil || out["label"] != "contradictory" {
		t.Errorf("Predict = %v, %v", out, err)
	}
}

func TestPredictBatchKeepsOrder(t *testing.T) {
	t.Parallel()
	c := &chat{reply: func(req map[string]any) any {
		user := req["messages"].([]any)[1].(map[string]any)["content"].(string)
		var i int
		_, _ = fmt.Sscanf(user[strings.Index(user, "h#"):], "h#%d", &i)
		return says(nli.Labels[i%3])(req)
	}}
	p, _ := start(t, c, map[string]any{"max_concurrency": 3}, nli)
	inputs := make([]map[string]any, 10)
	for i := range inputs {
		inputs[i] = map[string]any{"context": "c", "hypothesis": fmt.Sprintf("h#%d", i)}
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
}

func TestOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		opts  map[string]any
		sp    spec.Spec
		field string
	}{
		{map[string]any{}, nli, "options.model"},
		{map[string]any{"model": "m", "temperature": 3}, nli, "options.temperature"},
		{map[string]any{"model": "m", "prompt": "Classify this."}, nli, "options.prompt"},
		{map[string]any{"model": "m", "logprobs": "yes"}, nli, "options.logprobs"},
		{map[string]any{"model": "m"}, spec.Spec{LabelField: "tags"}, "kind"},
	}
	for _, tt := range tests {
		_, err := openai.New(&dynabench.Model{Kind: "openai", URL: "http://h/v1", Options: tt.opts}, tt.sp, httpx.Options{})
		var de *dynabench.Error
		if !errors.As(err, &de) || de.Field != tt.field {
			t.Errorf("options %v: error %v, want field %s", tt.opts, err, tt.field)
		}
	}
}

func TestFullEndpointURL(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&chat{reply: says("neutral")})
	defer srv.Close()
	p, err := openai.New(&dynabench.Model{Kind: "openai", URL: srv.URL + "/v1/chat/completions", Options: map[string]any{"model": "m"}}, nli, httpx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := p.Predict(context.Background(), pair); err != nil || out["label"] != "neutral" {
		t.Errorf("Predict = %v, %v", out, err)
	}
}
