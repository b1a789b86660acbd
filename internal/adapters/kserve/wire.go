package kserve

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

type inputTensor struct {
	Name     string   `json:"name"`
	Shape    []int    `json:"shape"`
	Datatype string   `json:"datatype"`
	Data     []string `json:"data"`
}

type requestedOutput struct {
	Name string `json:"name"`
}

type inferRequest struct {
	Inputs  []inputTensor     `json:"inputs"`
	Outputs []requestedOutput `json:"outputs,omitempty"`
}

type outputTensor struct {
	Name     string          `json:"name"`
	Shape    []int64         `json:"shape"`
	Datatype string          `json:"datatype"`
	Data     json.RawMessage `json:"data"`
}

type inferResponse struct {
	Outputs []outputTensor `json:"outputs"`
}

func (p *Predictor) request(inputs []map[string]any) inferRequest {
	var r inferRequest
	for _, f := range p.fields {
		data := make([]string, len(inputs))
		for i, in := range inputs {
			data[i] = spec.Text(in[f])
		}
		r.Inputs = append(r.Inputs, inputTensor{Name: p.tensors[f], Shape: []int{len(inputs)}, Datatype: "BYTES", Data: data})
	}
	for _, name := range []string{p.outLabel, p.outProbs, p.outAnswer, p.outConf} {
		if name != "" {
			r.Outputs = append(r.Outputs, requestedOutput{Name: name})
		}
	}
	return r
}

func (p *Predictor) decode(r inferResponse, n int) ([]map[string]any, error) {
	if p.spec.Kind == spec.ExtractiveQA {
		return p.decodeQA(r, n)
	}
	var labels []string
	var probs []float64
	var err error
	if p.outLabel != "" {
		if labels, err = p.labelTensor(r, n); err != nil {
			return nil, err
		}
	}
	if p.outProbs != "" {
		if probs, err = p.floatTensor(r, p.outProbs, n*len(p.order), fmt.Sprintf("%d inputs × %d labels", n, len(p.order))); err != nil {
			return nil, err
		}
	}
	out := make([]map[string]any, n)
	for i := range n {
		o := map[string]any{}
		if probs != nil {
			row := p.row(probs[i*len(p.order) : (i+1)*len(p.order)])
			if row == nil {
				return nil, spec.Invalidf("%s: every probability of input %d is zero", p.outProbs, i)
			}
			if p.spec.ProbField != "" {
				o[p.spec.ProbField] = spec.ProbValue(row)
			}
			o[p.spec.LabelField] = p.spec.Argmax(row)
		}
		if labels != nil {
			o[p.spec.LabelField] = labels[i]
		}
		out[i] = o
	}
	return out, nil
}

// row maps one row of probabilities onto the task labels, normalised (nil when all are zero).
func (p *Predictor) row(vals []float64) map[string]float64 {
	m := make(map[string]float64, len(p.spec.Labels))
	for _, l := range p.spec.Labels {
		m[l] = 0
	}
	for j, l := range p.order {
		m[l] += vals[j]
	}
	return spec.Normalise(m)
}

func (p *Predictor) labelTensor(r inferResponse, n int) ([]string, error) {
	vals, err := p.values(r, p.outLabel, n, fmt.Sprintf("%d inputs", n))
	if err != nil {
		return nil, err
	}
	labels := make([]string, n)
	for i, v := range vals {
		switch x := v.(type) {
		case string:
			l, ok := p.spec.MatchLabel(x)
			if !ok {
				return nil, spec.Invalidf("%s[%d] %s is not one of %s", p.outLabel, i, spec.Quote(x), p.spec.LabelList())
			}
			labels[i] = l
		case float64:
			if x != math.Trunc(x) || x < 0 || int(x) >= len(p.order) {
				return nil, spec.Invalidf("%s[%d] %s is not a label index (label_order has %d labels)", p.outLabel, i,
					strconv.FormatFloat(x, 'g', -1, 64), len(p.order))
			}
			labels[i] = p.order[int(x)]
		default:
			return nil, spec.Invalidf("%s[%d] is %s, want a label", p.outLabel, i, spec.TypeName(v))
		}
	}
	return labels, nil
}

func (p *Predictor) floatTensor(r inferResponse, name string, want int, what string) ([]float64, error) {
	vals, err := p.values(r, name, want, what)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(vals))
	for i, v := range vals {
		if out[i], err = spec.Unit(v); err != nil {
			return nil, spec.Invalidf("%s[%d]: %v (want probabilities, not logits)", name, i, err)
		}
	}
	return out, nil
}

// values finds the output tensor called name and returns its data flattened, which must hold want
// values (what says why, for the message).
func (p *Predictor) values(r inferResponse, name string, want int, what string) ([]any, error) {
	var t *outputTensor
	for i := range r.Outputs {
		if r.Outputs[i].Name == name {
			t = &r.Outputs[i]
			break
		}
	}
	if t == nil {
		return nil, spec.Invalidf("no output tensor %s (the answer has %s)", strconv.Quote(name), outputNames(r))
	}
	var data any
	if err := json.Unmarshal(t.Data, &data); err != nil || data == nil {
		return nil, spec.Invalidf("output tensor %s has no data list", strconv.Quote(name))
	}
	flat := flatten(data, nil)
	if len(flat) != want {
		return nil, spec.Invalidf("output tensor %s has %d values, want %d (%s)", strconv.Quote(name), len(flat), want, what)
	}
	if len(t.Shape) > 0 {
		size := int64(1)
		for _, d := range t.Shape {
			size *= d
		}
		if size != int64(len(flat)) {
			return nil, spec.Invalidf("output tensor %s has shape %v but %d values", strconv.Quote(name), t.Shape, len(flat))
		}
	}
	return flat, nil
}

// flatten reads row-major data, whether the server sent it flat (as the protocol says) or nested.
func flatten(v any, out []any) []any {
	list, ok := v.([]any)
	if !ok {
		return append(out, v)
	}
	for _, x := range list {
		out = flatten(x, out)
	}
	return out
}

func outputNames(r inferResponse) string {
	if len(r.Outputs) == 0 {
		return "no outputs"
	}
	names := make([]string, len(r.Outputs))
	for i, o := range r.Outputs {
		names[i] = strconv.Quote(o.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (p *Predictor) decodeQA(r inferResponse, n int) ([]map[string]any, error) {
	answers, err := p.values(r, p.outAnswer, n, fmt.Sprintf("%d inputs", n))
	if err != nil {
		return nil, err
	}
	var confs []float64
	if p.outConf != "" {
		if confs, err = p.floatTensor(r, p.outConf, n, fmt.Sprintf("%d inputs", n)); err != nil {
			return nil, err
		}
	}
	out := make([]map[string]any, n)
	for i, v := range answers {
		a, ok := v.(string)
		if !ok {
			return nil, spec.Invalidf("%s[%d] is %s, want a string", p.outAnswer, i, spec.TypeName(v))
		}
		out[i] = map[string]any{p.spec.AnswerField: a}
		if confs != nil && p.spec.ConfField != "" {
			out[i][p.spec.ConfField] = confs[i]
		}
	}
	return out, nil
}
