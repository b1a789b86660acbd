package httpx

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// BreakerState is the state of a model's circuit breaker, as the owner page shows it.
type BreakerState string

// Circuit breaker states.
const (
	// BreakerClosed: calls go through.
	BreakerClosed BreakerState = "closed"
	// BreakerOpen: the model failed too often; calls fail at once until the cool-down ends.
	BreakerOpen BreakerState = "open"
	// BreakerHalfOpen: the cool-down ended; the next call is a probe, and the others still fail fast
	// until it succeeds (closed) or fails (open again).
	BreakerHalfOpen BreakerState = "half_open"
	// BreakerDisabled: this model has no breaker (breaker_failures 0).
	BreakerDisabled BreakerState = "disabled"
)

// ErrCircuitOpen is wrapped by the error of a call refused by an open circuit.
var ErrCircuitOpen = errors.New("circuit open")

// outcome is what a call tells the breaker: only failures that say the model is down or overloaded
// count against it. A model that answers, even garbage or a 4xx, is up.
type outcome int

const (
	outcomeSuccess outcome = iota
	outcomeFailure
	outcomeNeutral // the caller gave up: says nothing about the model
)

type breaker struct {
	threshold int // consecutive failures that open the circuit; 0: never
	cooldown  time.Duration
	now       func() time.Time

	mu          sync.Mutex
	state       BreakerState
	consecutive int
	openedAt    time.Time
	probing     bool
}

func newBreaker(threshold int, cooldown time.Duration, now func() time.Time) *breaker {
	return &breaker{threshold: max(threshold, 0), cooldown: cooldown, now: now, state: BreakerClosed}
}

// allow says whether a call may go ahead; probe is true for the one call let through a half-open
// circuit, which must be reported to record even if it is abandoned.
func (b *breaker) allow() (probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerClosed:
		return false, nil
	case BreakerOpen:
		if wait := b.cooldown - b.now().Sub(b.openedAt); wait > 0 {
			return false, fmt.Errorf("%w after %d consecutive failures; next try in %s", ErrCircuitOpen,
				b.consecutive, roundDuration(wait))
		}
		b.state = BreakerHalfOpen
	}
	if b.probing {
		return false, fmt.Errorf("%w: a probe call is testing whether the model is back", ErrCircuitOpen)
	}
	b.probing = true
	return true, nil
}

// record takes a finished call's outcome.
func (b *breaker) record(probe bool, o outcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch o {
	case outcomeSuccess:
		b.consecutive = 0
		b.state = BreakerClosed
	case outcomeFailure:
		b.consecutive++
		if b.threshold > 0 && (probe || b.state == BreakerClosed && b.consecutive >= b.threshold) {
			b.state = BreakerOpen
			b.openedAt = b.now()
		}
	}
}

// snapshot returns the state as a caller would see it now, and when an open circuit lets a probe in.
func (b *breaker) snapshot() (state BreakerState, consecutive int, openUntil time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.threshold == 0 {
		return BreakerDisabled, b.consecutive, time.Time{}
	}
	state = b.state
	if state == BreakerOpen {
		openUntil = b.openedAt.Add(b.cooldown)
		if !b.now().Before(openUntil) {
			state = BreakerHalfOpen
		}
	}
	return state, b.consecutive, openUntil
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d
}
