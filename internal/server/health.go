package server

import (
	"context"
	"sync"
	"time"

	"github.com/dynabench-go/dynabench"
)

// watched wraps a predictor and keeps its health: calls, failures, the last error and latency.
type watched struct {
	p dynabench.Predictor

	mu sync.Mutex
	h  dynabench.ModelHealth
}

func (w *watched) record(start time.Time, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.h.Calls++
	w.h.LastLatencyMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		w.h.Failures++
		w.h.LastError = dynabench.AsModelError(err).Error()
		now := time.Now().UTC()
		w.h.LastErrorAt = &now
	}
}

// Predict calls the model and records the outcome.
func (w *watched) Predict(ctx context.Context, in map[string]any) (map[string]any, error) {
	start := time.Now()
	out, err := w.p.Predict(ctx, in)
	w.record(start, err)
	return out, err
}

// PredictBatch calls the model and records the outcome.
func (w *watched) PredictBatch(ctx context.Context, ins []map[string]any) ([]map[string]any, error) {
	start := time.Now()
	out, err := w.p.PredictBatch(ctx, ins)
	w.record(start, err)
	return out, err
}

func (w *watched) health() dynabench.ModelHealth {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.h
	if b, ok := w.p.(interface{ BreakerState() string }); ok {
		h.Breaker = b.BreakerState()
	}
	return h
}

// MemoryBytes passes on the wrapped model's own count of its memory, when it keeps one.
func (w *watched) MemoryBytes() int64 {
	if mr, ok := w.p.(interface{ MemoryBytes() int64 }); ok {
		return mr.MemoryBytes()
	}
	return -1
}
