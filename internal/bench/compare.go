package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// The goal for SQLite on a 2-core machine.
const (
	GoalThroughput = 1000.0 // examples per second, at least
	GoalP99        = 50.0   // milliseconds, under
	GoalRatio      = 0.5    // of the baseline's throughput, at least
)

// Options configure a comparison.
type Options struct {
	Task        string
	Concurrency int
	Users       int           // accounts; default Concurrency
	Duration    time.Duration // measured time per target, split over the rounds
	Requests    int           // measured requests per target; 0: bounded by Duration only
	Warmup      time.Duration // unmeasured load before each measured window
	Rate        float64       // requests per second per target, paced (see Load.Rate); 0: closed loop
	Rounds      int           // alternating measurement windows per target; default 2
	DatabaseURL string
	Synchronous string
	Progress    io.Writer // a line per second per window, and phase announcements
	ServerLog   io.Writer // the server's request log; nil discards it (it is still formatted)
	// CPUProfile, when set, receives a CPU profile of the first measured window of the server.
	CPUProfile io.Writer
}

// Report is the outcome of a comparison.
type Report struct {
	Task             string    `json:"task"`
	Engine           string    `json:"engine"`
	Synchronous      string    `json:"sqlite_synchronous,omitempty"`
	BaselineSettings string    `json:"baseline_settings"`
	Concurrency      int       `json:"concurrency"`
	Users            int       `json:"users"`
	Rounds           int       `json:"rounds"`
	Rate             float64   `json:"rate,omitempty"` // paced requests per second; 0: closed loop
	Warmup           float64   `json:"warmup_seconds"`
	Machine          Machine   `json:"machine"`
	Server           *Result   `json:"server"`
	Baseline         *Result   `json:"baseline"`
	Ratio            float64   `json:"throughput_ratio"` // server / baseline
	Fooled           int64     `json:"fooled"`           // measured examples that fooled the model
	Transactions     TxStats   `json:"server_transactions"`
	Drift            int       `json:"counter_drift"` // counters disagreeing with a recount afterwards
	Goal             GoalCheck `json:"goal"`
}

// GoalCheck holds each criterion of the goal. The ratio says nothing when both targets are paced at
// the same rate, so a paced run leaves it out of Met.
type GoalCheck struct {
	Throughput bool `json:"throughput"`
	P99        bool `json:"p99"`
	Ratio      bool `json:"ratio"`
	NoErrors   bool `json:"no_errors"`
	Met        bool `json:"met"`
}

// Machine records where the figures come from; the load averages hint at neighbours.
type Machine struct {
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	LoadBefore string `json:"load_average_before,omitempty"`
	LoadAfter  string `json:"load_average_after,omitempty"`
}

func (o *Options) defaults() error {
	o.Task = strings.TrimSpace(o.Task)
	if o.Task == "" {
		o.Task = "nli"
	}
	o.Rounds = orDefault(o.Rounds, 2)
	o.Users = orDefault(o.Users, o.Concurrency)
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Duration <= 0 && o.Requests <= 0 {
		return errors.New("bench: give a duration or a request count")
	}
	if o.Warmup < 0 || o.Warmup > MaxDuration {
		return fmt.Errorf("bench: warm-up must be 0 to %s", MaxDuration)
	}
	if o.Rounds > 100 {
		return errors.New("bench: at most 100 rounds")
	}
	return Load{Concurrency: o.Concurrency, Duration: o.Duration, Requests: o.Requests, Rate: o.Rate}.check()
}

// Compare starts a fresh Env and measures both targets in alternating windows (baseline, server,
// server, baseline, ... so that neither always goes first), each window after its own warm-up,
// and reports.
func Compare(ctx context.Context, opt Options) (*Report, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	fmt.Fprintf(opt.Progress, "setting up: fresh database, demo tasks, %d users, built-in model for %s\n", opt.Users, opt.Task)
	env, err := Start(ctx, EnvOptions{Task: opt.Task, Clients: opt.Concurrency, Users: opt.Users,
		DatabaseURL: opt.DatabaseURL, Synchronous: opt.Synchronous, ServerLog: opt.ServerLog})
	if err != nil {
		return nil, err
	}
	defer env.Close()
	rep := &Report{Task: opt.Task, Engine: env.Engine, Synchronous: env.Synchronous, BaselineSettings: env.Baseline.Settings,
		Concurrency: opt.Concurrency, Users: opt.Users, Rounds: opt.Rounds, Rate: opt.Rate, Warmup: opt.Warmup.Seconds(),
		Machine: machine()}
	if err := compare(ctx, env, opt, rep); err != nil {
		return nil, err
	}
	rep.Machine.LoadAfter = loadAverage()
	return rep, nil
}

func compare(ctx context.Context, env *Env, opt Options, rep *Report) error {
	client := NewClient(opt.Concurrency)
	defer closeIdle(client)
	m := &measurer{ctx: ctx, env: env, client: client, opt: opt}
	targets := map[string]Target{"server": env.Server(), "baseline": env.BaselineTarget()}
	runs := map[string][]*Result{}
	var fooled int64
	for round := range opt.Rounds {
		order := []string{"baseline", "server"}
		if round%2 == 1 {
			order = []string{"server", "baseline"}
		}
		for _, name := range order {
			label := fmt.Sprintf("%s %d/%d", name, round+1, opt.Rounds)
			// Every window gets its own warm-up: without it the first second after a switch is
			// measurably slower (the other target's writes invalidate the connections' page caches).
			if opt.Warmup > 0 {
				if _, err := m.run(name, false, "warm-up "+label, targets[name], Load{Duration: opt.Warmup, Rate: opt.Rate}); err != nil {
					return err
				}
			}
			env.Fooled() // count the measured examples only
			r, err := m.run(name, true, label, targets[name], m.window())
			if err != nil {
				return err
			}
			fooled += env.Fooled()
			runs[name] = append(runs[name], r)
		}
	}
	rep.Fooled = fooled
	if err := rep.finish(ctx, env, runs); err != nil {
		return err
	}
	rep.Transactions = txStats(m.txWait, m.txHold, rep.Server.Elapsed)
	return nil
}

// measurer runs the windows of one comparison.
type measurer struct {
	ctx      context.Context
	env      *Env
	txWait   []time.Duration
	txHold   []time.Duration
	client   *http.Client
	opt      Options
	profiled bool
}

// window is the load of one measured window: a share of the duration and of the request count.
func (m *measurer) window() Load {
	l := Load{Duration: m.opt.Duration / time.Duration(m.opt.Rounds), Rate: m.opt.Rate}
	if m.opt.Requests > 0 {
		l.Requests = (m.opt.Requests + m.opt.Rounds - 1) / m.opt.Rounds
	}
	return l
}

// run is one window against the target called name; measured windows of the server are profiled
// (the first only) and have their transactions timed.
func (m *measurer) run(name string, measured bool, label string, t Target, l Load) (*Result, error) {
	l.Concurrency, l.Label, l.Progress = m.opt.Concurrency, label, m.opt.Progress
	server := name == "server" && measured
	if server && m.opt.CPUProfile != nil && !m.profiled {
		m.profiled = true
		if err := pprof.StartCPUProfile(m.opt.CPUProfile); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	m.env.tx.take() // drop what the other target's window or the warm-up left
	r, err := Run(m.ctx, m.client, t, l)
	if err == nil && m.ctx.Err() != nil {
		err = m.ctx.Err()
	}
	if server {
		w, h := m.env.tx.take()
		m.txWait, m.txHold = append(m.txWait, w...), append(m.txHold, h...)
	}
	return r, err
}

func (rep *Report) finish(ctx context.Context, env *Env, runs map[string][]*Result) error {
	rep.Server, rep.Baseline = Merge(runs["server"]...), Merge(runs["baseline"]...)
	if rep.Baseline.Throughput > 0 {
		rep.Ratio = rep.Server.Throughput / rep.Baseline.Throughput
	}
	drift, err := env.Drift(ctx)
	if err != nil {
		return err
	}
	rep.Drift = drift
	g := GoalCheck{Throughput: rep.Server.Throughput >= GoalThroughput, P99: rep.Server.Latency.P99 < GoalP99,
		Ratio: rep.Ratio >= GoalRatio, NoErrors: rep.Server.Errors == 0}
	if rep.Rate > 0 {
		// Paced: the server kept up if it answered at the offered rate, give or take the tail
		// after the last request was due.
		g.Throughput = rep.Rate >= GoalThroughput && rep.Server.Throughput >= 0.99*rep.Rate
	}
	g.Met = g.Throughput && g.P99 && g.NoErrors && (g.Ratio || rep.Rate > 0)
	rep.Goal = g
	return nil
}

func machine() Machine {
	return Machine{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, LoadBefore: loadAverage()}
}

// loadAverage is the 1, 5 and 15 minute load averages on Linux, "" elsewhere.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// WriteText prints the report as a table.
func (rep *Report) WriteText(w io.Writer) {
	engine := rep.Engine
	if rep.Synchronous != "" {
		engine += " (synchronous=" + rep.Synchronous + ")"
	}
	pace := "closed loop"
	if rep.Rate > 0 {
		pace = fmt.Sprintf("paced at %.0f requests/s", rep.Rate)
	}
	fmt.Fprintf(w, "task %s on %s, %d clients (%s), %d users, %.1fs measured per target in %d alternating windows, each after %gs of warm-up\n",
		rep.Task, engine, rep.Concurrency, pace, rep.Users, rep.Server.Seconds, rep.Rounds, rep.Warmup)
	fmt.Fprintf(w, "machine: %d CPUs, GOMAXPROCS %d, %s %s, load average %s before, %s after\n",
		rep.Machine.CPUs, rep.Machine.GOMAXPROCS, rep.Machine.Go, rep.Machine.OS, rep.Machine.LoadBefore, rep.Machine.LoadAfter)
	fmt.Fprintf(w, "baseline: one INSERT per request; %s\n\n", rep.BaselineSettings)
	fmt.Fprintf(w, "%-9s %9s %7s %9s %8s %8s %8s %8s %8s %10s\n", "target", "requests", "errors", "req/s",
		"mean ms", "p50 ms", "p90 ms", "p99 ms", "max ms", "CPU ms/req")
	for _, row := range []struct {
		name string
		r    *Result
	}{{"server", rep.Server}, {"baseline", rep.Baseline}} {
		l := row.r.Latency
		fmt.Fprintf(w, "%-9s %9d %7d %9.0f %8.2f %8.2f %8.2f %8.2f %8.2f %10.3f\n", row.name, row.r.Requests, row.r.Errors,
			row.r.Throughput, l.Mean, l.P50, l.P90, l.P99, l.Max, row.r.CPUPerRequest)
	}
	fmt.Fprintf(w, "\nserver / baseline throughput: %.2f\n", rep.Ratio)
	fmt.Fprintf(w, "model in the loop: answered %d examples, fooled on %d; counters after the run: %d drifted\n",
		rep.Server.Latency.N, rep.Fooled, rep.Drift)
	tx := rep.Transactions
	fmt.Fprintf(w, "server write transactions: %d, %.2f in progress on average; wait to begin p50 %.2f ms p99 %.2f ms, begin to commit p50 %.2f ms p99 %.2f ms\n",
		tx.N, tx.Held, tx.Wait.P50, tx.Wait.P99, tx.Hold.P50, tx.Hold.P99)
	fmt.Fprintf(w, "goal: throughput >= %.0f/s %s; p99 < %.0f ms %s; >= %.1fx baseline %s; no errors %s => %s\n",
		GoalThroughput, mark(rep.Goal.Throughput), GoalP99, mark(rep.Goal.P99), GoalRatio, ratioMark(rep),
		mark(rep.Goal.NoErrors), map[bool]string{true: "met", false: "missed"}[rep.Goal.Met])
	for _, e := range append(rep.Server.ErrorText, rep.Baseline.ErrorText...) {
		fmt.Fprintf(w, "error: %s\n", e)
	}
}

func mark(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

func ratioMark(rep *Report) string {
	if rep.Rate > 0 {
		return "(n/a when paced)"
	}
	return mark(rep.Goal.Ratio)
}
