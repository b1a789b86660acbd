package adapters

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dynabench-go/dynabench"
)

// Cache keeps one predictor per registered model, so that its circuit breaker, concurrency limit and
// health stats live as long as the model rather than one call. A model's predictor is rebuilt when
// its kind, URL, options or the task's Spec change; a failed build is not kept, so fixing the
// server's environment and calling again works. Safe for concurrent use; builds of different models
// run in parallel, builds of one model once.
type Cache struct {
	reg *Registry

	mu      sync.Mutex
	entries map[int64]*cacheEntry
}

type cacheEntry struct {
	mu  sync.Mutex
	key string
	p   dynabench.Predictor
}

// NewCache returns an empty cache over reg.
func NewCache(reg *Registry) *Cache { return &Cache{reg: reg, entries: map[int64]*cacheEntry{}} }

// Predictor returns the predictor for m, building it on first use or when m changed.
func (c *Cache) Predictor(ctx context.Context, m *dynabench.Model, spec Spec) (dynabench.Predictor, error) {
	key, err := fingerprint(m, spec)
	if err != nil {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "options", "not JSON-shaped: %v", err)
	}
	c.mu.Lock()
	e := c.entries[m.ID]
	if e == nil {
		e = &cacheEntry{}
		c.entries[m.ID] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p != nil && e.key == key {
		return e.p, nil
	}
	p, err := c.reg.New(ctx, m, spec)
	if err != nil {
		return nil, err
	}
	e.key, e.p = key, p
	return p, nil
}

// Health returns the health of model id's predictor, if it was built and is an HTTP adapter.
func (c *Cache) Health(id int64) (Health, bool) {
	c.mu.Lock()
	e := c.entries[id]
	c.mu.Unlock()
	if e == nil {
		return Health{}, false
	}
	e.mu.Lock()
	p := e.p
	e.mu.Unlock()
	if p == nil {
		return Health{}, false
	}
	return HealthOf(p)
}

// Forget drops model id's predictor (a deleted model, or a rotated API key to read again).
func (c *Cache) Forget(id int64) {
	c.mu.Lock()
	delete(c.entries, id)
	c.mu.Unlock()
}

func fingerprint(m *dynabench.Model, spec Spec) (string, error) {
	b, err := json.Marshal(struct {
		Kind, URL string
		Options   map[string]any
		Spec      Spec
	}{m.Kind, m.URL, m.Options, spec})
	return string(b), err
}
