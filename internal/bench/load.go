package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Limits of one run, so that a typo cannot start a day-long test or fill the memory with samples.
const (
	MaxConcurrency = 1024
	MaxDuration    = time.Hour
	MaxRequests    = 10_000_000
)

// Target is an HTTP endpoint under load.
type Target interface {
	// Request builds request number seq of client i. Run calls it for a given i from one goroutine
	// only, so per-client state needs no lock.
	Request(ctx context.Context, i, seq int) (*http.Request, error)
	// Check judges a response; nil means the request succeeded.
	Check(status int, body []byte) error
}

// Load is how hard and how long to push.
type Load struct {
	Concurrency int           // clients, each with one request in flight
	Duration    time.Duration // clients start no request after this long; 0: no time bound
	Requests    int           // requests in all; 0: no count bound
	// Rate, when positive, paces the clients to this many requests per second in all (an open
	// loop, as long as Concurrency suffices); 0 lets each client send as fast as answers come.
	// Paced latencies are measured from when a request was due, not when it was sent, so a
	// server that falls behind is charged for the queue it causes (no coordinated omission).
	Rate     float64
	Label    string    // names the run in progress lines
	Progress io.Writer // a line per second when not nil
}

func (l Load) check() error {
	switch {
	case l.Concurrency < 1 || l.Concurrency > MaxConcurrency:
		return fmt.Errorf("bench: concurrency must be 1 to %d", MaxConcurrency)
	case l.Duration < 0 || l.Duration > MaxDuration:
		return fmt.Errorf("bench: duration must be at most %s", MaxDuration)
	case l.Requests < 0 || l.Requests > MaxRequests:
		return fmt.Errorf("bench: requests must be at most %d", MaxRequests)
	case l.Rate < 0 || l.Rate > 1e6:
		return errors.New("bench: rate must be 0 (unpaced) to 1e6 requests per second")
	case l.Duration == 0 && l.Requests == 0:
		return errors.New("bench: give a duration, a request count, or both")
	}
	return nil
}

// Result is what one or more runs against a target measured. Latency covers successful requests
// only; failures are counted in Errors, and the first few distinct ones kept.
type Result struct {
	Requests   int           `json:"requests"`
	Errors     int           `json:"errors"`
	Elapsed    time.Duration `json:"-"`
	Seconds    float64       `json:"seconds"`
	Throughput float64       `json:"throughput_rps"` // successful requests per second
	Latency    Summary       `json:"latency"`
	// CPU is the whole process's CPU time during the run — server and load generator together,
	// since they share the process — and CPUPerRequest its share per successful request. On a
	// shared machine it varies much less than throughput does.
	CPU           time.Duration `json:"-"`
	CPUSeconds    float64       `json:"cpu_seconds"`
	CPUPerRequest float64       `json:"cpu_ms_per_request"`
	ErrorText     []string      `json:"error_samples,omitempty"`

	samples []time.Duration
}

// Run drives target with load.Concurrency clients until the duration passes or the request count
// is reached, whichever comes first; requests in flight at the deadline are waited for and counted.
// It ends early, with what it has, when ctx ends.
func Run(ctx context.Context, client *http.Client, target Target, load Load) (*Result, error) {
	if err := load.check(); err != nil {
		return nil, err
	}
	r := &runner{client: client, target: target, load: load, perClient: make([][]time.Duration, load.Concurrency)}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	start, cpu := time.Now(), processCPU()
	r.start = start
	if load.Duration > 0 {
		r.deadline = start.Add(load.Duration)
	}
	stopProgress := r.progress(runCtx)
	var wg sync.WaitGroup
	for i := range load.Concurrency {
		wg.Go(func() { r.client1(runCtx, i) })
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), processCPU()-cpu
	stopProgress()
	return r.result(elapsed, cpu), nil
}

// runner is the shared state of one Run.
type runner struct {
	client    *http.Client
	target    Target
	load      Load
	start     time.Time
	deadline  time.Time
	tickets   atomic.Int64 // requests started, for the count bound
	done      atomic.Int64 // requests finished
	failed    atomic.Int64
	perClient [][]time.Duration // each client appends to its own slice: no lock on the hot path

	mu     sync.Mutex
	errors []string
}

// next reports whether a client may start another request and, for a paced load, when it is due
// (it has waited until then); the zero time means "now".
func (r *runner) next(ctx context.Context) (time.Time, bool) {
	if ctx.Err() != nil {
		return time.Time{}, false
	}
	if r.load.Rate <= 0 {
		if !r.deadline.IsZero() && !time.Now().Before(r.deadline) {
			return time.Time{}, false
		}
		return time.Time{}, r.load.Requests == 0 || r.tickets.Add(1) <= int64(r.load.Requests)
	}
	k := r.tickets.Add(1) - 1
	due := r.start.Add(time.Duration(float64(k) / r.load.Rate * float64(time.Second)))
	if (!r.deadline.IsZero() && !due.Before(r.deadline)) || (r.load.Requests > 0 && k >= int64(r.load.Requests)) {
		return due, false
	}
	return due, sleepUntil(ctx, due)
}

// sleepUntil waits for t; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (r *runner) client1(ctx context.Context, i int) {
	samples := make([]time.Duration, 0, 1024)
	for seq := 0; ; seq++ {
		due, ok := r.next(ctx)
		if !ok {
			break
		}
		d, err := r.do(ctx, i, seq, due)
		r.done.Add(1)
		if err != nil {
			r.fail(err)
			continue
		}
		samples = append(samples, d)
	}
	r.perClient[i] = samples
}

// do sends one request and reads the whole answer; the latency runs from due (a paced request's
// due time; if zero, the moment of sending) to the end of the body, as a client would see it.
func (r *runner) do(ctx context.Context, i, seq int, due time.Time) (time.Duration, error) {
	req, err := r.target.Request(ctx, i, seq)
	if err != nil {
		return 0, err
	}
	start := due
	if start.IsZero() {
		start = time.Now()
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	return d, r.target.Check(resp.StatusCode, body)
}

// fail counts an error and keeps its text if it is one of the first few distinct ones.
func (r *runner) fail(err error) {
	r.failed.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errors) >= 5 {
		return
	}
	for _, e := range r.errors {
		if e == err.Error() {
			return
		}
	}
	r.errors = append(r.errors, err.Error())
}

// progress prints a line per second until the returned stop is called.
func (r *runner) progress(ctx context.Context) (stop func()) {
	if r.load.Progress == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		start, last := time.Now(), int64(0)
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				n := r.done.Load()
				fmt.Fprintf(r.load.Progress, "%-18s %5.1fs %8d requests %7.0f/s (last second %5d/s) %d errors\n",
					r.load.Label, now.Sub(start).Seconds(), n, float64(n)/now.Sub(start).Seconds(), n-last, r.failed.Load())
				last = n
			}
		}
	}()
	return func() { cancel(); <-finished }
}

func (r *runner) result(elapsed, cpu time.Duration) *Result {
	res := &Result{Requests: int(r.done.Load()), Errors: int(r.failed.Load()), Elapsed: elapsed, CPU: cpu, ErrorText: r.errors}
	for _, s := range r.perClient {
		res.samples = append(res.samples, s...)
	}
	res.finish()
	return res
}

// finish derives the summary fields from the samples and the elapsed time.
func (res *Result) finish() {
	res.Seconds = res.Elapsed.Seconds()
	if res.Elapsed > 0 {
		res.Throughput = float64(len(res.samples)) / res.Elapsed.Seconds()
	}
	res.Latency = Summarize(res.samples)
	res.CPUSeconds = res.CPU.Seconds()
	if len(res.samples) > 0 {
		res.CPUPerRequest = ms(res.CPU) / float64(len(res.samples))
	}
}

// Merge combines runs against the same target (the alternating windows of a comparison) as if
// they were one run lasting their summed time.
func Merge(runs ...*Result) *Result {
	out := &Result{}
	for _, r := range runs {
		out.Requests += r.Requests
		out.Errors += r.Errors
		out.Elapsed += r.Elapsed
		out.CPU += r.CPU
		out.samples = append(out.samples, r.samples...)
		for _, e := range r.ErrorText {
			if len(out.ErrorText) < 5 && !slices.Contains(out.ErrorText, e) {
				out.ErrorText = append(out.ErrorText, e)
			}
		}
	}
	out.finish()
	return out
}
