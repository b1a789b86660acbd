package adapters_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters"
	"github.com/dynabench-go/dynabench/internal/demo"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// The answer fuzzers: a model server may answer anything. Each adapter, for each demo task, single
// call and batch, reads an arbitrary 200 answer without panicking, and either refuses it as an
// invalid answer or hands over an answer of the task's shape (a task label, probabilities in
// [0, 1], a string answer, a confidence in [0, 1]) that the rest of the submit path (the task's
// output check, "model fooled", the JSON column) takes without failing. Run one with e.g.
//
//	go test -run '^$' -fuzz '^FuzzDynalabAnswer$' -fuzztime 30s ./internal/adapters

// cannedTransport answers every request with 200 and the current body, without a network.
type cannedTransport struct{ body atomic.Pointer[[]byte] }

func (c *cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	b := *c.body.Load()
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)), Request: r}, nil
}

// fuzzTask is one demo task as an adapter sees it.
type fuzzTask struct {
	cfg    *taskconfig.Config
	spec   adapters.Spec
	inputs []map[string]any // model inputs: two contexts of the demo with a plausible input
}

func fuzzTasks(f *testing.F) []fuzzTask {
	tasks, err := demo.Tasks()
	if err != nil {
		f.Fatal(err)
	}
	var out []fuzzTask
	for _, t := range tasks {
		cfg, rep := taskconfig.Parse(t.Config)
		if cfg == nil || !rep.OK() {
			f.Fatalf("demo %s config: %v", t.Code, rep.Problems)
		}
		ft := fuzzTask{cfg: cfg, spec: adapters.SpecFor(cfg)}
		for _, c := range t.Contexts[:2] {
			in := map[string]any{}
			for _, fld := range cfg.Input {
				switch {
				case len(fld.Labels) > 0:
					in[fld.Name] = fld.Labels[0]
				case fld.Type == taskconfig.TypeContextStringSelection:
					in[fld.Name] = strings.Fields(c.Context["context"].(string))[0]
				default:
					in[fld.Name] = "Is the weather nice there?"
				}
			}
			ft.inputs = append(ft.inputs, cfg.ModelInput(c.Context, in))
		}
		out = append(out, ft)
	}
	return out
}

// fuzzAnswers runs one adapter kind against arbitrary answers. seeds are answer templates in which
// LABEL is replaced by each task's first label (or a word of its context for QA).
func fuzzAnswers(f *testing.F, kind string, opts func(adapters.Spec) map[string]any, seeds ...string) {
	tasks := fuzzTasks(f)
	tr := &cannedTransport{}
	empty := []byte{}
	tr.body.Store(&empty)
	reg := adapters.DefaultRegistry(adapters.Options{Client: &http.Client{Transport: tr}, MaxRetries: -1, BreakerFailures: -1})
	preds := make([]dynabench.Predictor, len(tasks))
	for i, t := range tasks {
		p, err := reg.New(context.Background(), &dynabench.Model{ID: int64(i + 1), Kind: kind, URL: "http://model.invalid/x",
			Options: opts(t.spec)}, t.spec)
		if err != nil {
			f.Fatalf("%s predictor for a %s task: %v", kind, t.spec.Kind, err)
		}
		preds[i] = p
	}
	seeds = append(seeds, "", "null", "[]", "{}", `"x"`, "1e999", `{"a":`, "\xff\xfe", `[{}, {}]`, `{"label": "\u0000"}`)
	for i, t := range tasks {
		word := "positive"
		if t.spec.Kind == adapters.KindExtractiveQA {
			word = strings.Fields(t.inputs[0][t.spec.ContextField].(string))[1]
		} else if len(t.spec.Labels) > 0 {
			word = t.spec.Labels[0]
		}
		for _, s := range seeds {
			s = strings.ReplaceAll(s, "LABEL", word)
			f.Add(uint8(i), false, []byte(s))
			f.Add(uint8(i), true, []byte("["+s+","+s+"]"))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, batch bool, body []byte) {
		i := int(which) % len(tasks)
		task, p := tasks[i], preds[i]
		tr.body.Store(&body)
		var outs []map[string]any
		var err error
		if batch {
			outs, err = p.PredictBatch(context.Background(), task.inputs)
			if err == nil && len(outs) != len(task.inputs) {
				t.Fatalf("%d answers for %d inputs", len(outs), len(task.inputs))
			}
		} else {
			var out map[string]any
			out, err = p.Predict(context.Background(), task.inputs[0])
			outs = []map[string]any{out}
		}
		if err != nil {
			var me *dynabench.ModelError
			if !errors.As(err, &me) || me.Kind != dynabench.ModelInvalidAnswer {
				t.Fatalf("error %v (%T), want an invalid_answer model error", err, err)
			}
			if strings.Contains(err.Error(), "\x00") || len(err.Error()) > 2000 {
				t.Fatalf("error message unfit for a log line: %q", err.Error())
			}
			return
		}
		for k, out := range outs {
			checkAnswer(t, task, task.inputs[k], out)
		}
	})
}

// checkAnswer asserts out has the task's shape, then takes it down the submit path.
func checkAnswer(t *testing.T, task fuzzTask, input, out map[string]any) {
	t.Helper()
	sp := task.spec
	if out == nil {
		t.Fatal("nil answer without an error")
	}
	switch sp.Kind {
	case adapters.KindClassification:
		if l, ok := out[sp.LabelField].(string); !ok || !slices.Contains(sp.Labels, l) {
			t.Fatalf("label %#v is not one of %v", out[sp.LabelField], sp.Labels)
		}
		if v, ok := out[sp.ProbField]; ok && sp.ProbField != "" {
			probs, ok := v.(map[string]any)
			if !ok || len(probs) != len(sp.Labels) {
				t.Fatalf("prob %#v: want one per label", v)
			}
			for _, l := range sp.Labels {
				if p, ok := probs[l].(float64); !ok || !(p >= 0 && p <= 1) {
					t.Fatalf("prob of %s is %#v", l, probs[l])
				}
			}
		}
	case adapters.KindExtractiveQA:
		if _, ok := out[sp.AnswerField].(string); !ok {
			t.Fatalf("answer %#v is not a string", out[sp.AnswerField])
		}
		if v, ok := out[sp.ConfField]; ok && v != nil && sp.ConfField != "" {
			if c, ok := v.(float64); !ok || !(c >= 0 && c <= 1) || math.IsNaN(c) {
				t.Fatalf("conf %#v", v)
			}
		}
	}
	// What the service does next (askModel): the task's own output check, the fooled decision,
	// and storing the answer as JSON.
	clean, problems := task.cfg.CheckOutput(input, out)
	if len(problems) == 0 {
		task.cfg.ModelWrong(input, clean)
		if _, err := json.Marshal(clean); err != nil {
			t.Fatalf("a checked answer cannot be stored: %v", err)
		}
	}
	if _, err := json.Marshal(out); err != nil {
		t.Fatalf("the answer cannot be stored: %v", err)
	}
}

func FuzzDynalabAnswer(f *testing.F) {
	fuzzAnswers(f, dynabench.KindDynalab, func(adapters.Spec) map[string]any { return nil },
		`{"label": "LABEL", "prob": {"LABEL": 0.9}}`, `[{"label": " LABEL "}]`, `{"label": "LABEL", "prob": {"LABEL": "0.5"}}`,
		`{"answer": "LABEL", "conf": 0.5}`, `{"answer": "LABEL", "conf": "1"}`, `{"label": 0, "prob": [0.1, 0.9]}`,
		`{"label": "LABEL", "prob": {"LABEL": -1}}`, `{"answer": "LABEL", "conf": 1e308}`)
}

func FuzzOpenAIAnswer(f *testing.F) {
	fuzzAnswers(f, dynabench.KindOpenAI, func(adapters.Spec) map[string]any { return map[string]any{"model": "m"} },
		`{"choices": [{"message": {"content": "LABEL"}}]}`,
		`{"choices": [{"message": {"content": "<think>hmm</think> **LABEL**."}}]}`,
		`{"choices": [{"message": {"content": [{"type": "text", "text": "LABEL"}]}}]}`,
		`{"choices": [{"message": {"content": "LABEL"}, "logprobs": {"content": [{"token": "LABEL", "logprob": -0.1,
		  "top_logprobs": [{"token": "LABEL", "logprob": -0.1}, {"token": "x", "logprob": -3}]}]}}]}`,
		`{"choices": [{"message": {"content": "LABEL"}, "logprobs": {"content": [{"token": "LABEL", "logprob": 1e308}]}}]}`,
		`{"error": {"message": "overloaded"}}`, `{"choices": []}`, `{"choices": [{"message": {"content": null}}]}`)
}

func FuzzHFAnswer(f *testing.F) {
	fuzzAnswers(f, dynabench.KindHF, func(adapters.Spec) map[string]any { return nil },
		`[{"label": "LABEL", "score": 0.9}, {"label": "x", "score": 0.1}]`, `[[{"label": "LABEL", "score": 1}]]`,
		`{"label": "LABEL", "score": "0.3"}`, `{"answer": "LABEL", "score": 0.5, "start": 0, "end": 3}`,
		`[{"answer": "LABEL", "score": 2}]`, `[{"label": "LABEL", "score": 0}]`)
}

func FuzzKServeAnswer(f *testing.F) {
	opts := func(sp adapters.Spec) map[string]any {
		if sp.Kind == adapters.KindExtractiveQA {
			return map[string]any{"model_name": "m", "output_answer": "answer", "output_conf": "conf"}
		}
		return map[string]any{"model_name": "m", "output_label": "label", "output_probs": "probs"}
	}
	fuzzAnswers(f, dynabench.KindKServe, opts,
		`{"outputs": [{"name": "label", "shape": [1], "datatype": "BYTES", "data": ["LABEL"]}]}`,
		`{"outputs": [{"name": "probs", "shape": [1, 3], "datatype": "FP32", "data": [[0.1, 0.2, 0.7]]}]}`,
		`{"outputs": [{"name": "label", "shape": [1], "datatype": "INT64", "data": [2]},
		  {"name": "probs", "shape": [1, 2], "datatype": "FP32", "data": [0.5, 0.5]}]}`,
		`{"outputs": [{"name": "answer", "shape": [1], "datatype": "BYTES", "data": ["LABEL"]},
		  {"name": "conf", "shape": [1], "datatype": "FP32", "data": [0.4]}]}`,
		`{"outputs": [{"name": "probs", "shape": [1, 3], "datatype": "FP32", "data": [-1, 0, 0]}]}`,
		`{"outputs": [{"name": "label", "shape": [-1], "datatype": "BYTES", "data": []}]}`)
}
