package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/demo"
)

// Resolver turns registered models into predictors. Built-in demo models are trained from the demo
// task's seed data on first use (deterministically, so every replica trains the same model) and kept
// in memory.
type Resolver struct {
	mu      sync.Mutex
	trained map[int64]*trainOnce
}

type trainOnce struct {
	once sync.Once
	p    atomic.Pointer[watched] // set once trained; read by ModelHealth without waiting
	err  error
}

// NewResolver returns an empty resolver.
func NewResolver() *Resolver { return &Resolver{trained: map[int64]*trainOnce{}} }

// Predictor returns a callable model for m.
func (r *Resolver) Predictor(ctx context.Context, m *dynabench.Model) (dynabench.Predictor, error) {
	if m.Kind != dynabench.KindBuiltin {
		return nil, &dynabench.ModelError{Kind: dynabench.ModelUnreachable,
			Err: fmt.Errorf("no adapter for model kind %q in this build", m.Kind)}
	}
	code, _ := m.Options["demo"].(string)
	if code == "" {
		return nil, &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: fmt.Errorf("built-in model %d has no training source", m.ID)}
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
		if p, t.err = trainDemo(code, seedOf(m)); t.err == nil {
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

func trainDemo(code string, seed uint64) (dynabench.Predictor, error) {
	tasks, err := demo.Tasks()
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		if t.Code == code {
			p, _, err := demo.TrainModel(t, seed)
			return p, err
		}
	}
	return nil, fmt.Errorf("no demo task %q", code)
}
