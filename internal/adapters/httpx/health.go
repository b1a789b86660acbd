package httpx

import (
	"errors"
	"sync"
	"time"

	"github.com/dynabench-go/dynabench"
)

// Health is what the owner page shows about a model endpoint: how calls went lately and whether the
// circuit is open. Messages are the same secret-free texts callers get.
type Health struct {
	Calls         int64 `json:"calls"`          // calls made, including those refused by the breaker
	Failures      int64 `json:"failures"`       // calls that failed, for any reason but the caller giving up
	Retries       int64 `json:"retries"`        // extra attempts after idempotent failures
	ShortCircuits int64 `json:"short_circuits"` // calls refused by an open circuit without contacting the model
	InFlight      int   `json:"in_flight"`      // calls holding one of the MaxConcurrent slots now
	MaxConcurrent int   `json:"max_concurrent"`

	LastError     string        `json:"last_error,omitempty"` // "kind: message" of the last failure
	LastErrorAt   time.Time     `json:"last_error_at,omitzero"`
	LastSuccessAt time.Time     `json:"last_success_at,omitzero"`
	LastLatency   time.Duration `json:"last_latency_ns"` // of the last call that reached the model

	Breaker             BreakerState `json:"breaker"`
	ConsecutiveFailures int          `json:"consecutive_failures"`
	OpenUntil           time.Time    `json:"open_until,omitzero"` // when an open circuit lets a probe through
}

// stats are the counters behind Health.
type stats struct {
	mu sync.Mutex
	h  Health
}

func (s *stats) retried() {
	s.mu.Lock()
	s.h.Retries++
	s.mu.Unlock()
}

func (s *stats) shortCircuit() {
	s.mu.Lock()
	s.h.Calls++
	s.h.Failures++
	s.h.ShortCircuits++
	s.mu.Unlock()
}

// finish records a call that was let through. A call the caller cancelled counts as a call only.
func (s *stats) finish(at time.Time, latency time.Duration, reached bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h.Calls++
	if reached {
		s.h.LastLatency = latency
	}
	switch {
	case err == nil:
		s.h.LastSuccessAt = at
	case errors.Is(err, errCancelled):
	default:
		s.h.Failures++
		s.h.LastErrorAt = at
		me := dynabench.AsModelError(err)
		s.h.LastError = me.Kind + ": " + me.Err.Error()
	}
}

func (s *stats) snapshot() Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h
}
