// Package dynalab calls models that speak Dynabench's model protocol (Dynalab 2.0), so existing
// Dynabench model containers work unchanged:
//
//	POST {url}/model/single_evaluation  body: the model-input object     answer: the output object
//	POST {url}/model/batch_evaluation   body: {"dataset_samples": [...]}  answer: a list, same order
//
// The platform reads the task's prediction field (model_output.model_prediction_label) and keeps the
// rest of the object (prob, conf, anything else) for the task's own output check. Real servers are
// tolerated where that costs no guessing: a label that differs from a task label only by surrounding
// space or case is taken as that label, probabilities may be numeric strings and need not sum to 1,
// and a single evaluation answered as a one-element list is unwrapped.
//
// Options: batch_size (samples per batch_evaluation call, default 32; longer batches are split and
// sent concurrently within the model's concurrency limit), and the common ones of package httpx.
package dynalab

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

// Paths of the protocol.
const (
	SinglePath = "/model/single_evaluation"
	BatchPath  = "/model/batch_evaluation"
)

// DefaultBatchSize is how many samples one batch_evaluation call carries unless batch_size says.
const DefaultBatchSize = 32

// Predictor calls one Dynalab model.
type Predictor struct {
	c         *httpx.Client
	spec      spec.Spec
	batchSize int
}

// New builds the predictor for m; option problems are an EINVALID error naming each field.
func New(m *dynabench.Model, sp spec.Spec, d httpx.Options) (*Predictor, error) {
	o := httpx.NewOpts(m.Options)
	p := &Predictor{spec: sp, batchSize: o.Int("batch_size", DefaultBatchSize, 1, 10_000)}
	p.c = httpx.NewClient(m, o, d)
	if err := o.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// Health reports the endpoint's call statistics and breaker state.
func (p *Predictor) Health() httpx.Health { return p.c.Health() }

// Predict implements dynabench.Predictor.
func (p *Predictor) Predict(ctx context.Context, input map[string]any) (map[string]any, error) {
	var out map[string]any
	err := p.c.Do(ctx, httpx.Request{Path: SinglePath, Body: input, Decode: func(body []byte) error {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return spec.Invalidf("malformed JSON: %v", err)
		}
		if list, ok := v.([]any); ok && len(list) == 1 {
			v = list[0]
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return spec.Invalidf("the answer is %s, want a JSON object", spec.TypeName(v))
		}
		if err := p.spec.Clean(obj); err != nil {
			return err
		}
		out = obj
		return nil
	}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// batchRequest is the batch_evaluation body.
type batchRequest struct {
	Samples []map[string]any `json:"dataset_samples"`
}

// PredictBatch implements dynabench.Predictor: batches of batch_size, sent concurrently within the
// model's concurrency limit. It fails as a whole when any batch fails or any answer is invalid.
func (p *Predictor) PredictBatch(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	out := make([]map[string]any, len(inputs))
	err := httpx.Batches(ctx, len(inputs), p.batchSize, p.c.MaxConcurrent(), func(ctx context.Context, lo, hi int) error {
		return p.c.Do(ctx, httpx.Request{Path: BatchPath, Body: batchRequest{inputs[lo:hi]},
			Decode: func(body []byte) error { return p.decodeBatch(body, lo, out[lo:hi]) }})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// decodeBatch reads a batch answer into out; lo is the first sample's index, for messages.
func (p *Predictor) decodeBatch(body []byte, lo int, out []map[string]any) error {
	var list []any
	if err := json.Unmarshal(body, &list); err != nil {
		var v any
		if json.Unmarshal(body, &v) == nil {
			return spec.Invalidf("the answer is %s, want a JSON list", spec.TypeName(v))
		}
		return spec.Invalidf("malformed JSON: %v", err)
	}
	if len(list) != len(out) {
		return spec.Invalidf("%d answers for %d samples", len(list), len(out))
	}
	for i, v := range list {
		obj, ok := v.(map[string]any)
		if !ok {
			return spec.Invalidf("answer %d is %s, want a JSON object", lo+i, spec.TypeName(v))
		}
		if err := p.spec.Clean(obj); err != nil {
			return spec.Within(fmt.Sprintf("answer %d", lo+i), err)
		}
		out[i] = obj
	}
	return nil
}
