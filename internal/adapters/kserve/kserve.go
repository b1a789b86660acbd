// Package kserve calls models served with the Open Inference Protocol v2 (KServe, Triton, MLServer),
// over its JSON/REST binding:
//
//	POST {url}/v2/models/{model_name}[/versions/{model_version}]/infer
//	{"inputs": [{"name": "text", "shape": [n], "datatype": "BYTES", "data": ["...", ...]}, ...],
//	 "outputs": [{"name": "label"}, ...]}
//
// Every text field is one BYTES tensor of shape [n] (a whole batch in one request), named by option
// input_names ({"hypothesis": "text_b"}) or after the field. A classifier answers with a BYTES tensor
// of labels (option output_label; an integer tensor is read as indices into label_order) and/or a
// float tensor of probabilities (option output_probs) of shape [n, len(label_order)], whose columns
// are the labels in option label_order (default: the task's labels in config order). Without a label
// tensor the label is the most probable; probabilities are normalised. An extractive QA model answers
// a BYTES tensor of answers (option output_answer) and optionally a float tensor of confidences
// (output_conf); its inputs are the context and question fields.
//
// Options: model_name (required), model_version, input_names, text_fields (which fields to send,
// default the task's text fields), output_label, output_probs, label_order, output_answer,
// output_conf, batch_size (default 64), and the common ones of package httpx.
//
// Ready checks GET {url}/v2/health/ready.
package kserve

import (
	"context"
	"encoding/json"
	"net/url"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

// DefaultBatchSize is how many inputs one infer call carries unless batch_size says.
const DefaultBatchSize = 64

// Predictor calls one model on an Open Inference Protocol v2 server.
type Predictor struct {
	c         *httpx.Client
	spec      spec.Spec
	path      string
	fields    []string          // task fields sent, in order
	tensors   map[string]string // task field -> input tensor name
	outLabel  string
	outProbs  string
	order     []string // label per probability column
	outAnswer string
	outConf   string
	batchSize int
}

// New builds the predictor for m; option problems are an EINVALID error naming each field.
func New(m *dynabench.Model, sp spec.Spec, d httpx.Options) (*Predictor, error) {
	o := httpx.NewOpts(m.Options)
	p := &Predictor{spec: sp, batchSize: o.Int("batch_size", DefaultBatchSize, 1, 10_000)}
	p.setPath(o)
	switch sp.Kind {
	case spec.Classification:
		p.readClassification(o)
	case spec.ExtractiveQA:
		p.readQA(o)
	default:
		o.Problem("kind", "a kserve model can serve classification and extractive QA tasks only")
	}
	p.readInputs(o)
	p.c = httpx.NewClient(m, o, d)
	if err := o.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Predictor) setPath(o *httpx.Opts) {
	name := o.String("model_name", "")
	if name == "" && !o.Has("model_name") {
		o.Problem("options.model_name", "required: the model's name on the inference server")
	}
	p.path = "/v2/models/" + url.PathEscape(name)
	if v := o.String("model_version", ""); v != "" {
		p.path += "/versions/" + url.PathEscape(v)
	}
	p.path += "/infer"
}

func (p *Predictor) readClassification(o *httpx.Opts) {
	p.fields = p.spec.TextFields
	if f := o.Strings("text_fields"); f != nil {
		p.fields = f
	}
	p.outLabel = o.String("output_label", "")
	p.outProbs = o.String("output_probs", "")
	if p.outLabel == "" && p.outProbs == "" && !o.Has("output_label") && !o.Has("output_probs") {
		o.Problem("options.output_label", "give output_label (a tensor of labels) and/or output_probs (a tensor of probabilities)")
	}
	p.order = p.spec.Labels
	if order := o.Strings("label_order"); order != nil {
		p.order = make([]string, len(order))
		seen := map[string]bool{}
		for i, l := range order {
			m, ok := p.spec.MatchLabel(l)
			if !ok || seen[m] {
				o.Problem("options.label_order", "must list task labels (%s), each once", p.spec.LabelList())
				return
			}
			seen[m], p.order[i] = true, m
		}
	}
}

func (p *Predictor) readQA(o *httpx.Opts) {
	p.fields = []string{p.spec.ContextField, p.spec.QuestionField}
	if p.spec.QuestionField == "" {
		o.Problem("kind", "this QA task has no question field to send")
	}
	p.outAnswer = o.String("output_answer", "")
	if p.outAnswer == "" && !o.Has("output_answer") {
		o.Problem("options.output_answer", "required: the tensor holding the answers")
	}
	p.outConf = o.String("output_conf", "")
}

func (p *Predictor) readInputs(o *httpx.Opts) {
	names := o.StringMap("input_names")
	p.tensors = make(map[string]string, len(p.fields))
	for _, f := range p.fields {
		p.tensors[f] = f
	}
	for field, tensor := range names {
		if _, ok := p.tensors[field]; !ok {
			o.Problem("options.input_names."+field, "not a field this model is sent")
			continue
		}
		if tensor == "" {
			o.Problem("options.input_names."+field, "must name a tensor")
			continue
		}
		p.tensors[field] = tensor
	}
}

// Health reports the endpoint's call statistics and breaker state.
func (p *Predictor) Health() httpx.Health { return p.c.Health() }

// Ready asks the server whether it is ready (GET {url}/v2/health/ready); nil when it says yes.
func (p *Predictor) Ready(ctx context.Context) error {
	return p.c.Do(ctx, httpx.Request{Method: "GET", Path: "/v2/health/ready"})
}

// Predict implements dynabench.Predictor.
func (p *Predictor) Predict(ctx context.Context, input map[string]any) (map[string]any, error) {
	out, err := p.infer(ctx, []map[string]any{input})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// PredictBatch implements dynabench.Predictor: batches of batch_size, one request each, sent
// concurrently within the model's concurrency limit.
func (p *Predictor) PredictBatch(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	out := make([]map[string]any, len(inputs))
	err := httpx.Batches(ctx, len(inputs), p.batchSize, p.c.MaxConcurrent(), func(ctx context.Context, lo, hi int) error {
		res, err := p.infer(ctx, inputs[lo:hi])
		copy(out[lo:hi], res)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (p *Predictor) infer(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	var out []map[string]any
	err := p.c.Do(ctx, httpx.Request{Path: p.path, Body: p.request(inputs), Decode: func(body []byte) error {
		var r inferResponse
		if err := json.Unmarshal(body, &r); err != nil {
			return spec.Invalidf("malformed inference response: %v", err)
		}
		var err error
		out, err = p.decode(r, len(inputs))
		return err
	}})
	return out, err
}
