package soak_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/soak"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

const (
	annotators = 12
	validators = 8
	maxErrRate = 0.01
	// The live heap of the last third of the run may exceed the first third's by this factor plus
	// slack: generous, since caches fill and GC timing varies; a leak of one object per request
	// over thousands of requests still shows.
	heapFactor = 1.5
	heapSlack  = 16 << 20
)

// TestSoak: annotators and validators at once through the HTTP API of the real server (in
// process, the demo tasks with their built-in models in the loop) for a bounded time, on every
// engine: no acknowledged write lost, no counter drift, an error rate below 1%, and a live heap
// that does not keep growing. Throughput and memory per second are logged, never asserted.
// DYNABENCH_SOAK_DURATION changes the 15 s.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak runs for seconds; skipped under -short")
	}
	d := 15 * time.Second
	if v := os.Getenv("DYNABENCH_SOAK_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatal(err)
		}
	}
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) { soakOne(t, engine, d) })
	}
}

func soakOne(t *testing.T, engine string, d time.Duration) {
	s := servertest.Start(t, engine)
	cfg := soak.Config{BaseURL: s.URL, Duration: d, Seed: 1}
	for i := range annotators {
		cfg.Annotators = append(cfg.Annotators, s.User(t, fmt.Sprintf("annotator%d", i)).Token)
	}
	for i := range validators {
		cfg.Validators = append(cfg.Validators, s.User(t, fmt.Sprintf("validator%d", i)).Token)
	}
	r := soak.Run(context.Background(), cfg)

	var table strings.Builder
	fmt.Fprintf(&table, "   t   examples/s  validations/s  errors  live heap MiB  RSS MiB\n")
	var rates []float64
	for i, smp := range r.Samples {
		secs := cfg.Interval.Seconds()
		if secs == 0 {
			secs = 1
		}
		if i > 0 {
			secs = (smp.At - r.Samples[i-1].At).Seconds()
		}
		rates = append(rates, float64(smp.Examples)/secs)
		fmt.Fprintf(&table, "%5.1f %10.0f %14.0f %7d %14.1f %8.1f\n", smp.At.Seconds(), float64(smp.Examples)/secs,
			float64(smp.Validations)/secs, smp.Errors, float64(smp.Memory.LiveHeap)/(1<<20), float64(smp.Memory.RSS)/(1<<20))
	}
	t.Logf("%s soak, %d annotators, %d validators, %s:\n%s", engine, annotators, validators, r.Duration.Round(time.Millisecond), table.String())

	if len(r.Examples) == 0 || len(r.Validations) == 0 {
		t.Fatalf("nothing acknowledged: %d examples, %d validated examples; errors: %v", len(r.Examples), len(r.Validations), r.ErrorTexts)
	}
	if r.ErrorRate() > maxErrRate {
		t.Errorf("error rate %.4f over %d requests, want below %.2f; e.g. %v", r.ErrorRate(), r.Requests, maxErrRate, r.ErrorTexts)
	}
	lost := soak.Verify(context.Background(), s.URL, s.AdminToken, r)
	for _, l := range lost[:min(len(lost), 20)] {
		t.Errorf("LOST: %s", l)
	}
	s.NoDrift(t)

	// Memory: the first two samples are warm-up (connections, caches, the first GCs).
	heap := make([]float64, 0, len(r.Samples))
	for _, smp := range r.Samples[min(2, len(r.Samples)):] {
		heap = append(heap, float64(smp.Memory.LiveHeap))
	}
	third := len(heap) / 3
	first, last := mean(heap[:third]), mean(heap[len(heap)-third:])
	if third > 0 && last > heapFactor*first+heapSlack {
		t.Errorf("live heap grew from %.1f MiB (first third) to %.1f MiB (last third)", first/(1<<20), last/(1<<20))
	}
	votes := 0
	for _, m := range r.Validations {
		for _, n := range m {
			votes += n
		}
	}
	slices.Sort(rates)
	t.Logf("%s: %d requests, %d errors (rate %.5f), %d conflicts; %d examples and %d validations acknowledged, %d lost; examples/s per second min %.0f median %.0f max %.0f; live heap first third %.1f MiB, last third %.1f MiB",
		engine, r.Requests, r.Errors, r.ErrorRate(), r.Conflicts, len(r.Examples), votes, len(lost),
		rates[0], rates[len(rates)/2], rates[len(rates)-1], first/(1<<20), last/(1<<20))
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
