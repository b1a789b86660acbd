package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters"
	"github.com/dynabench-go/dynabench/internal/blob"
	"github.com/dynabench-go/dynabench/internal/builtin"
	"github.com/dynabench-go/dynabench/internal/demo"
	"github.com/dynabench-go/dynabench/internal/training"
)

// Resolver turns registered models into predictors. Built-in models load their trained artifact from
// the blob store; the demo tasks' first models are trained from the seed set instead (deterministic,
// so every replica has the same model). Loaded models are kept in memory.
type Resolver struct {
	// Blobs holds trained artifacts of built-in models (options.blob_key).
	Blobs blob.Store
	// HTTP builds and keeps the adapters of HTTP models (one per model, so that its breaker,
	// concurrency limit and health outlive a call).
	HTTP *adapters.Cache
	// Spec says what the model's task expects back.
	Spec func(ctx context.Context, taskID int64) (adapters.Spec, error)

	mu      sync.Mutex
	trained map[int64]*trainOnce
}

type trainOnce struct {
	once sync.Once
	p    atomic.Pointer[watched] // set once trained; read by ModelHealth without waiting
	err  error
}

// NewResolver returns an empty resolver.
func NewResolver(blobs blob.Store, http *adapters.Cache) *Resolver {
	return &Resolver{Blobs: blobs, HTTP: http, trained: map[int64]*trainOnce{}}
}

// Predictor returns a callable model for m.
func (r *Resolver) Predictor(ctx context.Context, m *dynabench.Model) (dynabench.Predictor, error) {
	if m.Kind != dynabench.KindBuiltin {
		if r.HTTP == nil || r.Spec == nil {
			return nil, &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: fmt.Errorf("no adapter for model kind %q", m.Kind)}
		}
		spec, err := r.Spec(ctx, m.TaskID)
		if err != nil {
			return nil, err
		}
		p, err := r.HTTP.Predictor(ctx, m, spec)
		if err != nil {
			return nil, &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: err}
		}
		return p, nil
	}
	code, _ := m.Options["demo"].(string)
	key, _ := m.Options[training.OptionBlobKey].(string)
	if code == "" && key == "" {
		return nil, &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: fmt.Errorf("built-in model %d has no artifact", m.ID)}
	}
	r.mu.Lock()
	t, ok := r.trained[m.ID]
	if !ok {
		t = &trainOnce{}
		r.trained[m.ID] = t
	}
	r.mu.Unlock()
	t.once.Do(func() {
		var p dynabench.Predictor
		if key != "" {
			sum, _ := m.Options[training.OptionSHA256].(string)
			p, _, t.err = training.LoadBlob(ctx, r.Blobs, key, sum)
		} else {
			p, t.err = trainDemo(code, seedOf(m), m.Options["baseline"] == "prior")
		}
		if t.err == nil {
			t.p.Store(&watched{p: p})
		}
	})
	if t.err != nil {
		return nil, &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: t.err}
	}
	return t.p.Load(), nil
}

// ModelHealth reports the calls this server made to the model, if it has loaded it.
func (r *Resolver) ModelHealth(modelID int64) (dynabench.ModelHealth, bool) {
	if r.HTTP != nil {
		if h, ok := r.HTTP.Health(modelID); ok {
			mh := dynabench.ModelHealth{Calls: h.Calls, Failures: h.Failures, LastError: h.LastError,
				LastLatencyMS: float64(h.LastLatency.Microseconds()) / 1000, Breaker: string(h.Breaker)}
			if !h.LastErrorAt.IsZero() {
				at := h.LastErrorAt.UTC()
				mh.LastErrorAt = &at
			}
			return mh, true
		}
	}
	r.mu.Lock()
	t, ok := r.trained[modelID]
	r.mu.Unlock()
	if !ok {
		return dynabench.ModelHealth{}, false
	}
	w := t.p.Load()
	if w == nil {
		return dynabench.ModelHealth{}, false
	}
	return w.health(), true
}

func seedOf(m *dynabench.Model) uint64 {
	if f, ok := m.Options["seed"].(float64); ok && f >= 0 {
		return uint64(f)
	}
	return 1
}

func trainDemo(code string, seed uint64, baseline bool) (dynabench.Predictor, error) {
	tasks, err := demo.Tasks()
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		if t.Code == code && baseline {
			return demo.Baseline(t), nil
		}
		if t.Code == code {
			p, _, err := demo.TrainModel(t, seed)
			return p, err
		}
	}
	return nil, fmt.Errorf("no demo task %q", code)
}

// demoSeed returns a demo task's seed training set, less the examples held out as its dev dataset.
func demoSeed(code string) ([]builtin.TrainingExample, bool) {
	tasks, err := demo.Tasks()
	if err != nil {
		return nil, false
	}
	for _, t := range tasks {
		if t.Code == code {
			train, _ := t.TrainDev()
			return train, true
		}
	}
	return nil, false
}
