package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench/internal/sqlstore"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// engines maps the engines to test on to the database URL Start gets: "" makes a temporary SQLite
// file, a PostgreSQL URL a fresh schema in that database.
func engines() map[string]string {
	m := map[string]string{sqlstore.SQLite: ""}
	if u := os.Getenv(sqlstoretest.EnvPostgres); u != "" {
		m[sqlstore.Postgres] = u
	}
	return m
}

// BenchmarkSubmitExample posts examples to the running server (built-in model in the loop) and,
// for reference in the same run, the same bodies to the one-INSERT baseline. ns/op is wall time
// per request at parallelism 16 × GOMAXPROCS, so its inverse is the throughput.
//
//	go test -run '^$' -bench SubmitExample -benchtime 5s ./internal/bench
func BenchmarkSubmitExample(b *testing.B) {
	for _, engine := range []string{sqlstore.SQLite, sqlstore.Postgres} {
		b.Run(engine, func(b *testing.B) {
			dbURL, ok := engines()[engine]
			if !ok {
				b.Skip(sqlstoretest.EnvPostgres + " not set")
			}
			const parallelism = 16
			clients := parallelism * runtime.GOMAXPROCS(0)
			env, err := Start(context.Background(), EnvOptions{Task: "nli", Clients: clients, DatabaseURL: dbURL})
			if err != nil {
				b.Fatal(err)
			}
			defer env.Close()
			b.Run("server", func(b *testing.B) { runParallel(b, env.Server(), clients, parallelism) })
			b.Run("baseline", func(b *testing.B) { runParallel(b, env.BaselineTarget(), clients, parallelism) })
		})
	}
}

// runParallel drives target from b.RunParallel's goroutines, each one client of the Env, and
// reports the latency percentiles next to ns/op.
func runParallel(b *testing.B, target Target, clients, parallelism int) {
	client := NewClient(clients)
	defer closeIdle(client)
	r := &runner{client: client, target: target, perClient: make([][]time.Duration, clients)}
	var next atomic.Int64
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)-1) % clients
		for seq := 0; pb.Next(); seq++ {
			d, err := r.do(context.Background(), i, seq, time.Time{})
			if err != nil {
				b.Error(err)
				return
			}
			r.perClient[i] = append(r.perClient[i], d)
		}
	})
	b.StopTimer()
	res := r.result(b.Elapsed(), 0)
	b.ReportMetric(res.Latency.P50, "p50-ms")
	b.ReportMetric(res.Latency.P99, "p99-ms")
}

// TestCompareWellFormed runs a short comparison on every configured engine and checks the shape
// of the report, never its timings: this machine is shared.
func TestCompareWellFormed(t *testing.T) {
	t.Parallel()
	for engine, dbURL := range engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			var progress bytes.Buffer
			rep, err := Compare(context.Background(), Options{Task: "nli", Concurrency: 4, Users: 2,
				Duration: time.Second, Warmup: 200 * time.Millisecond, DatabaseURL: dbURL, Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Engine != engine {
				t.Errorf("engine %q, want %q", rep.Engine, engine)
			}
			checkResult(t, "server", rep.Server)
			checkResult(t, "baseline", rep.Baseline)
			if rep.Ratio <= 0 || rep.Drift != 0 || rep.Rounds != 2 {
				t.Errorf("ratio %v, drift %d, rounds %d", rep.Ratio, rep.Drift, rep.Rounds)
			}
			if !bytes.Contains(progress.Bytes(), []byte("setting up")) {
				t.Errorf("no progress written: %q", progress.String())
			}
			checkOutputs(t, rep)
		})
	}
}

// TestEnvLeavesNothing checks that the server's data directory (blobs, the SQLite file) is a
// temporary one, removed on Close, and never the working directory.
func TestEnvLeavesNothing(t *testing.T) {
	t.Parallel()
	env, err := Start(context.Background(), EnvOptions{Task: "sentiment", Clients: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := env.Main.Config.DataDir
	if dir == "" || dir == "." || !strings.HasPrefix(dir, os.TempDir()) {
		t.Errorf("data dir %q is not a temporary directory", dir)
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still exists after Close (%v)", dir, err)
	}
}

func checkResult(t *testing.T, name string, r *Result) {
	t.Helper()
	l := r.Latency
	switch {
	case r.Requests <= 0 || r.Errors != 0 || l.N != r.Requests:
		t.Errorf("%s: %d requests, %d errors (%v), %d samples", name, r.Requests, r.Errors, r.ErrorText, l.N)
	case r.Throughput <= 0 || r.Seconds <= 0:
		t.Errorf("%s: throughput %v over %vs", name, r.Throughput, r.Seconds)
	case !(0 < l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max):
		t.Errorf("%s: percentiles out of order: %+v", name, l)
	}
}

// checkOutputs renders the report both ways, as the command does.
func checkOutputs(t *testing.T, rep *Report) {
	t.Helper()
	var text bytes.Buffer
	rep.WriteText(&text)
	for _, want := range []string{"server", "baseline", "p99 ms", "server / baseline throughput"} {
		if !bytes.Contains(text.Bytes(), []byte(want)) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"server", "baseline", "throughput_ratio", "machine"} {
		if _, ok := back[key]; !ok {
			t.Errorf("JSON report lacks %q: %s", key, b)
		}
	}
}

func TestRunStopsAtRequestCount(t *testing.T) {
	t.Parallel()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
	})}
	url := serve(t, srv)
	res, err := Run(context.Background(), NewClient(3), fixedTarget(url), Load{Concurrency: 3, Requests: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 50 || res.Errors != 0 || res.Latency.N != 50 {
		t.Errorf("got %d requests, %d errors, %d samples; want 50, 0, 50", res.Requests, res.Errors, res.Latency.N)
	}
}

func TestRunPaced(t *testing.T) {
	t.Parallel()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	})}
	url := serve(t, srv)
	res, err := Run(context.Background(), NewClient(4), fixedTarget(url), Load{Concurrency: 4, Requests: 30, Rate: 300})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 30 || res.Errors != 0 || res.Latency.N != 30 {
		t.Errorf("got %d requests, %d errors, %d samples; want 30, 0, 30", res.Requests, res.Errors, res.Latency.N)
	}
}

func TestRunCountsErrors(t *testing.T) {
	t.Parallel()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusTeapot)
	})}
	url := serve(t, srv)
	res, err := Run(context.Background(), NewClient(2), fixedTarget(url), Load{Concurrency: 2, Requests: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 10 || res.Latency.N != 0 || len(res.ErrorText) != 1 {
		t.Errorf("got %d errors, %d samples, error texts %q", res.Errors, res.Latency.N, res.ErrorText)
	}
}

func TestRunRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	// 192.0.2.0/24 is TEST-NET-1: never routed, and refused before any packet is sent anyway.
	res, err := Run(context.Background(), NewClient(1), fixedTarget("http://192.0.2.1:9/"), Load{Concurrency: 1, Requests: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 1 || len(res.ErrorText) != 1 || !bytes.Contains([]byte(res.ErrorText[0]), []byte("only loopback")) {
		t.Errorf("got %+v", res)
	}
}

func TestLoadNeedsABound(t *testing.T) {
	t.Parallel()
	for _, l := range []Load{{Concurrency: 1}, {Concurrency: 0, Requests: 1}, {Concurrency: 1, Duration: 2 * MaxDuration},
		{Concurrency: MaxConcurrency + 1, Requests: 1}} {
		if _, err := Run(context.Background(), http.DefaultClient, fixedTarget("http://127.0.0.1:1/"), l); err == nil {
			t.Errorf("%+v: no error", l)
		}
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	var s []time.Duration
	for i := 100; i >= 1; i-- {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	sum := Summarize(s)
	want := Summary{N: 100, Mean: 50.5, P50: 50, P90: 90, P99: 99, Max: 100}
	if sum != want {
		t.Errorf("got %+v, want %+v", sum, want)
	}
	if got := Percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("one sample: %v", got)
	}
	if got := Summarize(nil); got != (Summary{}) {
		t.Errorf("no samples: %+v", got)
	}
}

type fixedTarget string

func (f fixedTarget) Request(ctx context.Context, _, _ int) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodPost, string(f), bytes.NewReader([]byte(`{}`)))
}

func (fixedTarget) Check(status int, body []byte) error {
	if status != http.StatusCreated {
		return &statusError{status}
	}
	return nil
}

type statusError struct{ status int }

func (e *statusError) Error() string { return http.StatusText(e.status) }

// serve starts srv on a loopback port until the test ends and returns its URL.
func serve(t *testing.T, srv *http.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}
