// Package adapters turns registered models into dynabench.Predictors: one sub-package per model
// protocol (dynalab, openai, hf, kserve), ensembles over any of them, and a registry keyed by kind.
//
// The sub-packages share spec (what the task expects back, and strict readers of answers) and httpx
// (deadlines, retries, concurrency limit, circuit breaker, body cap, typed errors, health). Build
// one registry with DefaultRegistry at start-up, register the built-in kind on it, and keep the
// predictors it makes (a Cache does that), since each holds its model's breaker and call slots.
package adapters

import (
	"context"
	"fmt"
	"sort"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/dynalab"
	"github.com/dynabench-go/dynabench/internal/adapters/hf"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
	"github.com/dynabench-go/dynabench/internal/adapters/kserve"
	"github.com/dynabench-go/dynabench/internal/adapters/openai"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

// Spec tells an adapter what the task expects back, derived from the task config by SpecFor: the
// platform speaks in the task's field names; adapters translate to and from each protocol.
type Spec = spec.Spec

// Task kinds a Spec can have.
const (
	KindClassification = spec.Classification
	KindExtractiveQA   = spec.ExtractiveQA
)

// Options are the defaults of every HTTP adapter of a registry (timeouts, retries, limits, secret
// sources); see httpx.Options.
type Options = httpx.Options

// Health is a model endpoint's call statistics and breaker state, for the owner page.
type Health = httpx.Health

// BreakerState is the state of a model's circuit breaker.
type BreakerState = httpx.BreakerState

// Factory builds a predictor for a model of one kind.
type Factory func(ctx context.Context, m *dynabench.Model, spec Spec) (dynabench.Predictor, error)

// Registry maps model kinds to factories. Register everything before use: New may then be called
// concurrently.
type Registry struct {
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{factories: map[string]Factory{}} }

// DefaultRegistry returns a registry of the HTTP adapters (dynalab, openai, hf, kserve) sharing opts
// and one connection pool. The built-in kind is not in it: the server registers its own.
func DefaultRegistry(opts Options) *Registry {
	opts = opts.WithDefaults()
	r := NewRegistry()
	r.Register(dynabench.KindDynalab, func(_ context.Context, m *dynabench.Model, s Spec) (dynabench.Predictor, error) {
		return dynalab.New(m, s, opts)
	})
	r.Register(dynabench.KindOpenAI, func(_ context.Context, m *dynabench.Model, s Spec) (dynabench.Predictor, error) {
		return openai.New(m, s, opts)
	})
	r.Register(dynabench.KindHF, func(_ context.Context, m *dynabench.Model, s Spec) (dynabench.Predictor, error) {
		return hf.New(m, s, opts)
	})
	r.Register(dynabench.KindKServe, func(_ context.Context, m *dynabench.Model, s Spec) (dynabench.Predictor, error) {
		return kserve.New(m, s, opts)
	})
	return r
}

// Register adds (or replaces) the factory for kind.
func (r *Registry) Register(kind string, f Factory) { r.factories[kind] = f }

// New builds a predictor for m; an unknown kind is an EINVALID error naming the field "kind", and
// bad options an EINVALID error naming each ("url", "options.timeout_ms").
func (r *Registry) New(ctx context.Context, m *dynabench.Model, spec Spec) (dynabench.Predictor, error) {
	f, ok := r.factories[m.Kind]
	if !ok {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "kind", "no adapter for model kind %q", m.Kind)
	}
	p, err := f(ctx, m, spec)
	if err != nil {
		return nil, fmt.Errorf("adapters: %s model %d: %w", m.Kind, m.ID, err)
	}
	return p, nil
}

// Kinds lists the registered kinds, sorted.
func (r *Registry) Kinds() []string {
	out := make([]string, 0, len(r.factories))
	for k := range r.factories {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// HealthOf returns a predictor's health, when it is an HTTP adapter (ok is false otherwise).
func HealthOf(p dynabench.Predictor) (h Health, ok bool) {
	hp, ok := p.(interface{ Health() Health })
	if !ok {
		return Health{}, false
	}
	return hp.Health(), true
}
