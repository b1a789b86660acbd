// Package ratelimit counts attempts per client address in fixed windows: what bounds password
// guessing and mass registration, shared by the API and the web pages so neither is a way around
// the other.
package ratelimit

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Limiter allows at most N events per key per window.
type Limiter struct {
	mu     sync.Mutex
	n      int
	window time.Duration
	counts map[string]*windowCount
}

type windowCount struct {
	start time.Time
	n     int
}

// New returns a limiter of n events per window.
func New(n int, window time.Duration) *Limiter {
	return &Limiter{n: n, window: window, counts: map[string]*windowCount{}}
}

// Allow counts one event for key and reports whether it is within the limit, and if not, how long
// until the window resets.
func (l *Limiter) Allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.counts) > 100000 { // bound memory under an address-spraying attack
		for k, c := range l.counts {
			if now.Sub(c.start) >= l.window {
				delete(l.counts, k)
			}
		}
	}
	c, ok := l.counts[key]
	if !ok || now.Sub(c.start) >= l.window {
		c = &windowCount{start: now}
		l.counts[key] = c
	}
	c.n++
	if c.n > l.n {
		return false, c.start.Add(l.window).Sub(now)
	}
	return true, 0
}

// Blocked reports whether key has used up its window without counting an event, and how long until
// the window resets. With Add, it limits failures only: a login checks Blocked first and Adds when
// the password was wrong, so users who type it right are never held back by the limit.
func (l *Limiter) Blocked(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.counts[key]
	if !ok || now.Sub(c.start) >= l.window || c.n < l.n {
		return false, 0
	}
	return true, c.start.Add(l.window).Sub(now)
}

// Add counts one event for key.
func (l *Limiter) Add(key string, now time.Time) { l.Allow(key, now) }

// ClientAddr is the address limits key on: the first X-Forwarded-For entry behind a trusted proxy,
// the connection's address otherwise.
func ClientAddr(r *http.Request, trustProxy bool) string {
	if trustProxy {
		if f := r.Header.Get("X-Forwarded-For"); f != "" {
			return strings.TrimSpace(strings.Split(f, ",")[0])
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
