package ratelimit

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	l := New(3, time.Minute)
	for i := range 3 {
		if ok, _ := l.Allow("a", now); !ok {
			t.Fatalf("event %d refused", i+1)
		}
	}
	if ok, wait := l.Allow("a", now.Add(10*time.Second)); ok || wait != 50*time.Second {
		t.Fatalf("4th event: ok=%v wait=%v, want refused for 50s", ok, wait)
	}
	if ok, _ := l.Allow("b", now); !ok {
		t.Fatal("another key is limited apart")
	}
	if ok, _ := l.Allow("a", now.Add(time.Minute)); !ok {
		t.Fatal("a new window starts after the old one")
	}

	// Blocked + Add count failures only: blocked after 3, never before.
	f := New(3, time.Minute)
	for i := range 3 {
		if blocked, _ := f.Blocked("x", now); blocked {
			t.Fatalf("blocked after %d failures", i)
		}
		f.Add("x", now)
	}
	if blocked, wait := f.Blocked("x", now.Add(time.Second)); !blocked || wait != 59*time.Second {
		t.Fatalf("after 3 failures: blocked=%v wait=%v", blocked, wait)
	}
}

func TestClientAddr(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "192.0.2.7:5555"
	r.Header.Set("X-Forwarded-For", "203.0.113.9, 10.0.0.1")
	if got := ClientAddr(r, false); got != "192.0.2.7" {
		t.Fatalf("untrusted proxy header used: %s", got)
	}
	if got := ClientAddr(r, true); got != "203.0.113.9" {
		t.Fatalf("behind a trusted proxy: %s", got)
	}
}
