// Package hf calls models behind the Hugging Face inference JSON protocol: the text-classification
// and question-answering pipelines as served by the Inference API, Inference Endpoints and
// compatible servers. The model's URL is the endpoint itself (POST {url}).
//
// Text classification: {"inputs": text}, or {"inputs": {"text": a, "text_pair": b}} for a task with
// two text fields (NLI), and a list of those for a batch; the answer is [{label, score}, ...] or
// [[{label, score}, ...], ...]. Server labels are mapped onto the task's by option label_map
// ({"LABEL_0": "negative"}; a label mapped to "" is ignored), else by the task label they equal
// ignoring case; a label that maps to nothing is an invalid answer. Scores become prob over the task
// labels (labels the server does not give get 0), normalised; the label is the most probable.
//
// Question answering: {"inputs": {"question": q, "context": c}} answering {answer, score, start,
// end} (or a list of those, best first); the answer is the span, score its conf.
//
// Options: label_map, text_fields (the task's input fields to send, one or two, default the task's
// text fields), parameters (an object sent as is, e.g. {"top_k": 3}), batch_size (default 32), and
// the common ones of package httpx (api_key_env / api_key_file send a Bearer token).
package hf

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

// DefaultBatchSize is how many inputs one call carries unless batch_size says.
const DefaultBatchSize = 32

// Predictor calls one Hugging Face inference endpoint.
type Predictor struct {
	c          *httpx.Client
	spec       spec.Spec
	labelMap   map[string]string // server label, lower-cased -> task label ("" drops it)
	fields     []string
	parameters map[string]any
	batchSize  int
}

// New builds the predictor for m; option problems are an EINVALID error naming each field.
func New(m *dynabench.Model, sp spec.Spec, d httpx.Options) (*Predictor, error) {
	o := httpx.NewOpts(m.Options)
	p := &Predictor{spec: sp, batchSize: o.Int("batch_size", DefaultBatchSize, 1, 10_000)}
	if v, ok := o.Raw("parameters"); ok {
		if p.parameters, ok = v.(map[string]any); !ok {
			o.Problem("options.parameters", "must be an object")
		}
	}
	switch sp.Kind {
	case spec.Classification:
		p.readClassification(o)
	case spec.ExtractiveQA:
		if sp.ContextField == "" || sp.QuestionField == "" {
			o.Problem("kind", "this QA task has no question field to send")
		}
	default:
		o.Problem("kind", "an hf model can serve classification and extractive QA tasks only")
	}
	p.c = httpx.NewClient(m, o, d)
	if err := o.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Predictor) readClassification(o *httpx.Opts) {
	p.fields = p.spec.TextFields
	if f := o.Strings("text_fields"); f != nil {
		p.fields = f
	}
	if len(p.fields) == 0 || len(p.fields) > 2 {
		o.Problem("options.text_fields", "text-classification takes one text or a pair; the task has %d text fields, "+
			"so name one or two", len(p.fields))
	}
	p.labelMap = map[string]string{}
	for from, to := range o.StringMap("label_map") {
		if to == "" {
			p.labelMap[strings.ToLower(from)] = ""
			continue
		}
		l, ok := p.spec.MatchLabel(to)
		if !ok {
			o.Problem("options.label_map."+from, "%s is not one of %s", spec.Quote(to), p.spec.LabelList())
			continue
		}
		p.labelMap[strings.ToLower(from)] = l
	}
}

// Health reports the endpoint's call statistics and breaker state.
func (p *Predictor) Health() httpx.Health { return p.c.Health() }

// Predict implements dynabench.Predictor.
func (p *Predictor) Predict(ctx context.Context, input map[string]any) (map[string]any, error) {
	out, err := p.call(ctx, []map[string]any{input}, false)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// PredictBatch implements dynabench.Predictor: batches of batch_size, sent concurrently within the
// model's concurrency limit.
func (p *Predictor) PredictBatch(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	out := make([]map[string]any, len(inputs))
	err := httpx.Batches(ctx, len(inputs), p.batchSize, p.c.MaxConcurrent(), func(ctx context.Context, lo, hi int) error {
		res, err := p.call(ctx, inputs[lo:hi], true)
		copy(out[lo:hi], res)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type request struct {
	Inputs     any            `json:"inputs"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

// call sends inputs in one request: as a list when batch, else the one input alone.
func (p *Predictor) call(ctx context.Context, inputs []map[string]any, batch bool) ([]map[string]any, error) {
	items := make([]any, len(inputs))
	for i, in := range inputs {
		items[i] = p.encode(in)
	}
	req := request{Inputs: items, Parameters: p.parameters}
	if !batch {
		req.Inputs = items[0]
	}
	var out []map[string]any
	err := p.c.Do(ctx, httpx.Request{Body: req, Decode: func(body []byte) error {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return spec.Invalidf("malformed JSON: %v", err)
		}
		var err error
		out, err = p.decode(v, len(inputs))
		return err
	}})
	return out, err
}

func (p *Predictor) encode(in map[string]any) any {
	if p.spec.Kind == spec.ExtractiveQA {
		return map[string]any{"question": spec.Text(in[p.spec.QuestionField]), "context": spec.Text(in[p.spec.ContextField])}
	}
	if len(p.fields) == 2 {
		return map[string]any{"text": spec.Text(in[p.fields[0]]), "text_pair": spec.Text(in[p.fields[1]])}
	}
	return spec.Text(in[p.fields[0]])
}

// decode splits an answer into one value per input and reads each.
func (p *Predictor) decode(v any, n int) ([]map[string]any, error) {
	items, err := p.perInput(v, n)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, n)
	for i, item := range items {
		var o map[string]any
		if p.spec.Kind == spec.ExtractiveQA {
			o, err = p.readQA(item)
		} else {
			o, err = p.readScores(item)
		}
		if err != nil {
			if n > 1 {
				return nil, spec.Within(fmt.Sprintf("answer %d", i), err)
			}
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// perInput splits the answer: for one input, the whole answer (unwrapping [[...]]); for several, a
// list with one entry per input.
func (p *Predictor) perInput(v any, n int) ([]any, error) {
	list, isList := v.([]any)
	if n == 1 {
		if isList && len(list) == 1 {
			if inner, ok := list[0].([]any); ok {
				return []any{inner}, nil
			}
		}
		return []any{v}, nil
	}
	if !isList {
		return nil, spec.Invalidf("the answer is %s, want a list with one entry per input", spec.TypeName(v))
	}
	if len(list) != n {
		return nil, spec.Invalidf("%d answers for %d inputs", len(list), n)
	}
	return list, nil
}

// readScores reads [{label, score}, ...] (or one {label, score}) into label and prob.
func (p *Predictor) readScores(v any) (map[string]any, error) {
	entries, ok := v.([]any)
	if !ok {
		entries = []any{v}
	}
	if len(entries) == 0 {
		return nil, spec.Invalidf("no labels in the answer")
	}
	probs := make(map[string]float64, len(p.spec.Labels))
	for _, l := range p.spec.Labels {
		probs[l] = 0
	}
	for _, e := range entries {
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, spec.Invalidf("a score is %s, want {\"label\", \"score\"}", spec.TypeName(e))
		}
		label, keep, err := p.mapLabel(obj["label"])
		if err != nil {
			return nil, err
		}
		score, err := spec.Unit(obj["score"])
		if err != nil {
			return nil, spec.Invalidf("score of %s: %v", spec.Quote(label), err)
		}
		if keep {
			probs[label] += score
		}
	}
	norm := spec.Normalise(probs)
	if norm == nil {
		return nil, spec.Invalidf("every task label scored zero")
	}
	out := map[string]any{p.spec.LabelField: p.spec.Argmax(norm)}
	if p.spec.ProbField != "" {
		out[p.spec.ProbField] = spec.ProbValue(norm)
	}
	return out, nil
}

// mapLabel maps a server label to a task label; keep is false for labels mapped to "".
func (p *Predictor) mapLabel(v any) (label string, keep bool, err error) {
	s, ok := v.(string)
	if !ok {
		return "", false, spec.Invalidf("a label is %s, want a string", spec.TypeName(v))
	}
	if to, mapped := p.labelMap[strings.ToLower(s)]; mapped {
		return to, to != "", nil
	}
	if l, ok := p.spec.MatchLabel(s); ok {
		return l, true, nil
	}
	return "", false, spec.Invalidf("the label %s is not one of %s (map it with options.label_map)", spec.Quote(s), p.spec.LabelList())
}

// readQA reads {answer, score, ...} or a list of those, best first.
func (p *Predictor) readQA(v any) (map[string]any, error) {
	if list, ok := v.([]any); ok {
		if len(list) == 0 {
			return nil, spec.Invalidf("no answer in the list")
		}
		v = list[0]
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, spec.Invalidf("the answer is %s, want {\"answer\", \"score\"}", spec.TypeName(v))
	}
	a, ok := obj["answer"].(string)
	if !ok {
		return nil, spec.Invalidf("answer is %s, want a string", spec.TypeName(obj["answer"]))
	}
	out := map[string]any{p.spec.AnswerField: a}
	if s, present := obj["score"]; present && s != nil && p.spec.ConfField != "" {
		conf, err := spec.Unit(s)
		if err != nil {
			return nil, spec.Invalidf("score: %v", err)
		}
		out[p.spec.ConfField] = conf
	}
	return out, nil
}
