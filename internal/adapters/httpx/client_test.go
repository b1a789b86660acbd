package httpx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
)

// server is a test endpoint that counts the requests it got.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func serve(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// sleeps records the waits between retries without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func testOptions() (httpx.Options, *sleeps) {
	s := &sleeps{}
	return httpx.Options{Timeout: 10 * time.Second, Sleep: s.sleep, Jitter: func() float64 { return 0.5 }}, s
}

func newClient(t *testing.T, url string, opts map[string]any, d httpx.Options) *httpx.Client {
	t.Helper()
	o := httpx.NewOpts(opts)
	c := httpx.NewClient(&dynabench.Model{ID: 1, Kind: dynabench.KindDynalab, URL: url, Options: opts}, o, d)
	if err := o.Err(); err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// call makes a POST to /x whose decode keeps the body.
func call(ctx context.Context, c *httpx.Client) (string, error) {
	var got string
	err := c.Do(ctx, httpx.Request{Path: "/x", Body: map[string]any{"q": 1}, Decode: func(b []byte) error {
		got = string(b)
		return nil
	}})
	return got, err
}

func kind(err error) string {
	var me *dynabench.ModelError
	if !errors.As(err, &me) {
		return fmt.Sprintf("not a ModelError: %v", err)
	}
	return me.Kind
}

func wantKind(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", want)
	}
	if got := kind(err); got != want {
		t.Fatalf("error %v: kind %s, want %s", err, got, want)
	}
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"label":"a"}`) }

// hang answers nothing until the client goes away or the test ends. It reads the body first: the
// server notices a closed connection only once it is reading from it again.
func hang(t *testing.T, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-t.Context().Done():
	}
}

func TestDoSendsJSONAndDecodes(t *testing.T) {
	t.Parallel()
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/base/x" || r.URL.RawQuery != "v=1" ||
			r.Header.Get("Content-Type") != "application/json" || string(body) != `{"q":1}` ||
			r.Header.Get("Authorization") != "" {
			http.Error(w, fmt.Sprintf("bad request %s %s %q", r.Method, r.URL, body), 400)
			return
		}
		ok(w, r)
	})
	d, _ := testOptions()
	c := newClient(t, s.URL+"/base/?v=1", nil, d)
	got, err := call(context.Background(), c)
	if err != nil || got != `{"label":"a"}` {
		t.Fatalf("got %q, %v", got, err)
	}
	h := c.Health()
	if h.Calls != 1 || h.Failures != 0 || h.LastSuccessAt.IsZero() || h.Breaker != httpx.BreakerClosed || h.MaxConcurrent != 8 {
		t.Errorf("health %+v", h)
	}
}

func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func TestServerDownIsUnreachableAfterRetries(t *testing.T) {
	t.Parallel()
	d, sl := testOptions()
	c := newClient(t, closedPort(t), nil, d)
	_, err := call(context.Background(), c)
	wantKind(t, err, dynabench.ModelUnreachable)
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("message %q", err)
	}
	if h := c.Health(); h.Retries != 2 || h.Failures != 1 || h.LastError == "" || h.LastErrorAt.IsZero() {
		t.Errorf("health %+v", h)
	}
	// Backoff is exponential: base 100ms then 200ms, with jitter 0.5 giving 3/4 of each.
	if got := sl.all(); len(got) != 2 || got[0] != 75*time.Millisecond || got[1] != 150*time.Millisecond {
		t.Errorf("backoff %v", got)
	}
}

func TestHangIsTimeoutWithoutRetry(t *testing.T) {
	t.Parallel()
	s := serve(t, func(w http.ResponseWriter, r *http.Request) { hang(t, r) })
	d, _ := testOptions()
	c := newClient(t, s.URL, map[string]any{"timeout_ms": 100}, d)
	start := time.Now()
	_, err := call(context.Background(), c)
	wantKind(t, err, dynabench.ModelTimeout)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within") {
		t.Errorf("error %v", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %s", el)
	}
	if n := s.hits.Load(); n != 1 {
		t.Errorf("%d requests, want 1 (a timeout used the deadline: no retry)", n)
	}

	// The caller's deadline, when sooner, is the one that counts.
	c2 := newClient(t, s.URL, nil, d)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = call(ctx, c2)
	wantKind(t, err, dynabench.ModelTimeout)
}

func TestCallerCancelIsNotAFailure(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		hang(t, r)
	})
	d, _ := testOptions()
	c := newClient(t, s.URL, map[string]any{"breaker_failures": 1}, d)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, err := call(ctx, c)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if h := c.Health(); h.Failures != 0 || h.Breaker != httpx.BreakerClosed || h.Calls != 1 {
		t.Errorf("health %+v", h)
	}
}

// hijackClose closes the connection without answering.
func hijackClose(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

func TestResetBeforeResponseIsRetried(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			hijackClose(w)
			return
		}
		ok(w, r)
	})
	d, _ := testOptions()
	c := newClient(t, s.URL, nil, d)
	if _, err := call(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if s.hits.Load() != 2 || c.Health().Retries != 1 {
		t.Errorf("hits %d, health %+v", s.hits.Load(), c.Health())
	}

	always := serve(t, func(w http.ResponseWriter, r *http.Request) { hijackClose(w) })
	c = newClient(t, always.URL, nil, d)
	_, err := call(context.Background(), c)
	wantKind(t, err, dynabench.ModelUnreachable)
	if always.hits.Load() != 3 {
		t.Errorf("%d requests, want 3", always.hits.Load())
	}
}

func TestResetMidResponseIsNotRetried(t *testing.T) {
	t.Parallel()
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"lab")
		_ = buf.Flush()
		conn.Close()
	})
	d, _ := testOptions()
	c := newClient(t, s.URL, nil, d)
	_, err := call(context.Background(), c)
	wantKind(t, err, dynabench.ModelUnreachable)
	if !strings.Contains(err.Error(), "while reading the answer") {
		t.Errorf("message %q", err)
	}
	if s.hits.Load() != 1 {
		t.Errorf("%d requests, want 1", s.hits.Load())
	}
}

func TestStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		statuses []int  // answered in turn, then 200
		header   string // Retry-After on the failures
		kind     string // "" for success
		hits     int64
		waits    []time.Duration // nil: not checked
		message  string
	}{
		{name: "500 is not retried", statuses: []int{500}, kind: dynabench.ModelBadStatus, hits: 1, message: "HTTP 500: boom"},
		{name: "503 then success", statuses: []int{503}, hits: 2},
		{name: "502 and 504 then success", statuses: []int{502, 504}, hits: 3},
		{name: "503 until retries run out", statuses: []int{503, 503, 503}, kind: dynabench.ModelBadStatus, hits: 3},
		{name: "400 is not retried", statuses: []int{400}, kind: dynabench.ModelBadStatus, hits: 1},
		{name: "404 is not retried", statuses: []int{404}, kind: dynabench.ModelBadStatus, hits: 1},
		{name: "429 honours Retry-After", statuses: []int{429}, header: "1", hits: 2, waits: []time.Duration{time.Second}},
		{name: "429 asking too long is not retried", statuses: []int{429}, header: "3600", kind: dynabench.ModelBadStatus,
			hits: 1, waits: []time.Duration{}, message: "longer than this server waits"},
		{name: "429 without Retry-After backs off", statuses: []int{429}, hits: 2, waits: []time.Duration{75 * time.Millisecond}},
		{name: "503 with Retry-After", statuses: []int{503}, header: "2", hits: 2, waits: []time.Duration{2 * time.Second}},
		{name: "redirect is not followed", statuses: []int{302}, kind: dynabench.ModelBadStatus, hits: 1, message: "redirects are not followed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var n atomic.Int64
			s := serve(t, func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				if i >= len(tt.statuses) {
					ok(w, r)
					return
				}
				if tt.header != "" {
					w.Header().Set("Retry-After", tt.header)
				}
				if tt.statuses[i] == 302 {
					w.Header().Set("Location", "http://elsewhere.invalid/")
				}
				http.Error(w, "boom", tt.statuses[i])
			})
			d, sl := testOptions()
			c := newClient(t, s.URL, nil, d)
			_, err := call(context.Background(), c)
			if tt.kind == "" && err != nil {
				t.Fatalf("error %v", err)
			}
			if tt.kind != "" {
				wantKind(t, err, tt.kind)
				if !strings.Contains(err.Error(), tt.message) {
					t.Errorf("message %q, want %q", err, tt.message)
				}
			}
			if got := s.hits.Load(); got != tt.hits {
				t.Errorf("%d requests, want %d", got, tt.hits)
			}
			if tt.waits != nil && fmt.Sprint(sl.all()) != fmt.Sprint(tt.waits) {
				t.Errorf("waits %v, want %v", sl.all(), tt.waits)
			}
		})
	}
}

func TestRetryStopsAtTheDeadline(t *testing.T) {
	t.Parallel()
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "slow down", 429)
	})
	d, sl := testOptions()
	c := newClient(t, s.URL, map[string]any{"timeout_ms": 1000}, d)
	_, err := call(context.Background(), c)
	wantKind(t, err, dynabench.ModelBadStatus)
	if s.hits.Load() != 1 || len(sl.all()) != 0 {
		t.Errorf("hits %d, waits %v: a wait past the deadline must not be started", s.hits.Load(), sl.all())
	}
}

func TestBodyCap(t *testing.T) {
	t.Parallel()
	big := `"` + strings.Repeat("x", 2000) + `"`
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr bool
	}{
		{"content-length over the cap", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, big) }, true},
		{"chunked over the cap", func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i < 20; i++ {
				_, _ = io.WriteString(w, strings.Repeat(" ", 100))
				http.NewResponseController(w).Flush()
			}
			_, _ = io.WriteString(w, "{}")
		}, true},
		{"exactly the cap", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `"`+strings.Repeat("x", 1022)+`"`)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := serve(t, tt.handler)
			d, _ := testOptions()
			d.MaxBodyBytes = 1024
			c := newClient(t, s.URL, map[string]any{"breaker_failures": 1}, d)
			_, err := call(context.Background(), c)
			if !tt.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantKind(t, err, dynabench.ModelInvalidAnswer)
			if !strings.Contains(err.Error(), "answer too large (more than 1 KiB)") {
				t.Errorf("message %q", err)
			}
			if c.Health().Breaker != httpx.BreakerClosed {
				t.Errorf("an answering model must not trip the breaker")
			}
		})
	}
}

func TestDecodeErrorsAreInvalidAnswers(t *testing.T) {
	t.Parallel()
	s := serve(t, ok)
	d, _ := testOptions()
	c := newClient(t, s.URL, map[string]any{"breaker_failures": 2}, d)
	for range 5 {
		err := c.Do(context.Background(), httpx.Request{Path: "/x", Decode: func([]byte) error { return errors.New("not a label") }})
		wantKind(t, err, dynabench.ModelInvalidAnswer)
	}
	if h := c.Health(); h.Breaker != httpx.BreakerClosed || h.Failures != 5 || s.hits.Load() != 5 {
		t.Errorf("health %+v, hits %d", h, s.hits.Load())
	}
	err := c.Do(context.Background(), httpx.Request{Path: "/x", Decode: func([]byte) error {
		return &dynabench.ModelError{Kind: dynabench.ModelBadStatus, Err: errors.New("custom")}
	}})
	wantKind(t, err, dynabench.ModelBadStatus)
}

func TestBreakerOpensShortCircuitsAndRecovers(t *testing.T) {
	t.Parallel()
	var healthy atomic.Bool
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if healthy.Load() {
			ok(w, r)
			return
		}
		http.Error(w, "down", 500)
	})
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	d, _ := testOptions()
	d.Now = clk.Now
	c := newClient(t, s.URL, map[string]any{"breaker_failures": 3, "breaker_cooldown_ms": 60_000}, d)
	ctx := context.Background()
	for range 3 {
		_, err := call(ctx, c)
		wantKind(t, err, dynabench.ModelBadStatus)
	}
	if h := c.Health(); h.Breaker != httpx.BreakerOpen || h.ConsecutiveFailures != 3 || !h.OpenUntil.Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("health %+v", h)
	}
	_, err := call(ctx, c)
	wantKind(t, err, dynabench.ModelUnreachable)
	if !errors.Is(err, httpx.ErrCircuitOpen) || !strings.Contains(err.Error(), "next try in 1m0s") {
		t.Errorf("error %v", err)
	}
	if s.hits.Load() != 3 || c.Health().ShortCircuits != 1 {
		t.Errorf("hits %d, health %+v: an open circuit must not call the model", s.hits.Load(), c.Health())
	}

	// After the cool-down, a failing probe opens the circuit again.
	clk.Add(time.Minute)
	if st := c.Health().Breaker; st != httpx.BreakerHalfOpen {
		t.Errorf("state %s after the cool-down", st)
	}
	_, err = call(ctx, c)
	wantKind(t, err, dynabench.ModelBadStatus)
	if _, err = call(ctx, c); !errors.Is(err, httpx.ErrCircuitOpen) || s.hits.Load() != 4 {
		t.Errorf("after a failed probe: %v, hits %d", err, s.hits.Load())
	}

	// A succeeding probe closes it.
	clk.Add(time.Minute)
	healthy.Store(true)
	if _, err := call(ctx, c); err != nil {
		t.Fatal(err)
	}
	if h := c.Health(); h.Breaker != httpx.BreakerClosed || h.ConsecutiveFailures != 0 {
		t.Errorf("health %+v", h)
	}
	if _, err := call(ctx, c); err != nil {
		t.Fatal(err)
	}
}

func TestHalfOpenLetsOneProbeThrough(t *testing.T) {
	t.Parallel()
	var healthy atomic.Bool
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if !healthy.Load() {
			http.Error(w, "down", 503)
			return
		}
		arrived <- struct{}{}
		<-release
		ok(w, r)
	})
	clk := &clock{now: time.Unix(0, 0)}
	d, _ := testOptions()
	d.Now = clk.Now
	c := newClient(t, s.URL, map[string]any{"breaker_failures": 1, "max_retries": 0}, d)
	_, err := call(context.Background(), c)
	wantKind(t, err, dynabench.ModelBadStatus)
	clk.Add(time.Hour)
	healthy.Store(true)

	probe := make(chan error)
	go func() { _, err := call(context.Background(), c); probe <- err }()
	<-arrived
	if _, err := call(context.Background(), c); !errors.Is(err, httpx.ErrCircuitOpen) {
		t.Errorf("second call during the probe: %v", err)
	}
	close(release)
	if err := <-probe; err != nil {
		t.Fatal(err)
	}
	if c.Health().Breaker != httpx.BreakerClosed {
		t.Errorf("breaker %s", c.Health().Breaker)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	t.Parallel()
	const limit, calls = 3, 12
	var inFlight, peak atomic.Int64
	arrived, release := make(chan struct{}, calls), make(chan struct{})
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		arrived <- struct{}{}
		<-release
		inFlight.Add(-1)
		ok(w, r)
	})
	d, _ := testOptions()
	c := newClient(t, s.URL, map[string]any{"max_concurrency": limit}, d)
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Go(func() {
			_, err := call(context.Background(), c)
			errs <- err
		})
	}
	for range limit {
		<-arrived
	}
	if h := c.Health(); h.InFlight != limit {
		t.Errorf("in flight %d, want %d", h.InFlight, limit)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if p := peak.Load(); p != limit {
		t.Errorf("peak concurrency %d, want %d", p, limit)
	}
	if s.hits.Load() != calls {
		t.Errorf("%d requests", s.hits.Load())
	}
}

func TestWaitingForASlotRespectsTheDeadline(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		ok(w, r)
	})
	d, _ := testOptions()
	c := newClient(t, s.URL, map[string]any{"max_concurrency": 1, "breaker_failures": 1}, d)
	first := make(chan error)
	go func() { _, err := call(context.Background(), c); first <- err }()
	<-arrived
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := call(ctx, c)
	wantKind(t, err, dynabench.ModelTimeout)
	if !strings.Contains(err.Error(), "call slots") {
		t.Errorf("message %q", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if s.hits.Load() != 1 || c.Health().Breaker != httpx.BreakerClosed {
		t.Errorf("hits %d, breaker %s: waiting in our own queue is not the model's failure", s.hits.Load(), c.Health().Breaker)
	}
}

func TestDenyPrivateNetworks(t *testing.T) {
	t.Parallel()
	s := serve(t, ok)
	d, _ := testOptions()
	d.DenyPrivateNetworks = true
	c := newClient(t, s.URL, map[string]any{"max_retries": 0}, d)
	_, err := call(context.Background(), c)
	wantKind(t, err, dynabench.ModelUnreachable)
	if !strings.Contains(err.Error(), "private network") || s.hits.Load() != 0 {
		t.Errorf("error %v, hits %d", err, s.hits.Load())
	}
}
