package httpx

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"Sun, 01 Mar 2026 12:00:10 GMT", 10 * time.Second, true},
		{"Sun, 01 Mar 2026 11:00:00 GMT", 0, true},
	}
	for _, tt := range tests {
		got, ok := retryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	if got := clip("a\n\tb\x00c  d", 100); got != "a b c d" {
		t.Errorf("clip = %q", got)
	}
	if got := clip("ééééé", 3); got != "é…" {
		t.Errorf("clip = %q", got)
	}
}

func TestFanOut(t *testing.T) {
	t.Parallel()
	var peak, cur atomic.Int64
	err := FanOut(context.Background(), 50, 4, func(ctx context.Context, i int) error {
		n := cur.Add(1)
		defer cur.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		return nil
	})
	if err != nil || peak.Load() > 4 {
		t.Errorf("err %v, peak %d", err, peak.Load())
	}

	boom := errors.New("boom")
	err = FanOut(context.Background(), 100, 2, func(ctx context.Context, i int) error {
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("err %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = FanOut(ctx, 10, 2, func(context.Context, int) error { t.Error("called after the context ended"); return nil })
	var me *dynabench.ModelError
	if !errors.As(err, &me) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled fan-out: %v", err)
	}
}
