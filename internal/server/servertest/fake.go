package servertest

import (
	"context"
	"maps"
	"sync/atomic"

	"github.com/dynabench-go/dynabench"
)

// Fake is a model in the loop whose answer the test decides.
type Fake struct {
	// Answer returns the model's output for an input; nil answers Output.
	Answer func(ctx context.Context, input map[string]any) (map[string]any, error)
	// Output is the fixed answer when Answer is nil.
	Output map[string]any
	calls  atomic.Int64
}

// Predict implements dynabench.Predictor.
func (f *Fake) Predict(ctx context.Context, input map[string]any) (map[string]any, error) {
	f.calls.Add(1)
	if f.Answer != nil {
		return f.Answer(ctx, input)
	}
	return maps.Clone(f.Output), nil
}

// PredictBatch implements dynabench.Predictor.
func (f *Fake) PredictBatch(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	out := make([]map[string]any, len(inputs))
	for i, in := range inputs {
		o, err := f.Predict(ctx, in)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// Calls counts the predictions asked of f.
func (f *Fake) Calls() int64 { return f.calls.Load() }

// Says returns a model that always answers label (with a probability dict over labels when given).
func Says(label string, labels ...string) *Fake {
	out := map[string]any{"label": label}
	if len(labels) > 0 {
		prob := map[string]any{}
		for _, l := range labels {
			prob[l] = 0.0
		}
		prob[label] = 1.0
		out["prob"] = prob
	}
	return &Fake{Output: out}
}

// Blocks returns a model that never answers: it waits for the call's deadline.
func Blocks() *Fake {
	return &Fake{Answer: func(ctx context.Context, _ map[string]any) (map[string]any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
}

// Fails returns a model whose every call fails with err.
func Fails(err error) *Fake {
	return &Fake{Answer: func(context.Context, map[string]any) (map[string]any, error) { return nil, err }}
}

var _ dynabench.Predictor = (*Fake)(nil)
