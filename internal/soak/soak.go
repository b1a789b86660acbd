// Package soak runs many annotators and validators at once against a running server, through its
// real HTTP API, for a bounded time, and samples what a soak test watches: throughput per interval,
// the error rate, and memory over time. Every write the server acknowledges is recorded, so that
// Verify can prove afterwards that none was lost.
//
// It targets the demo tasks (their input fields and labels are known here); the server must be on
// loopback (bench.NewClient refuses anything else).
package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynabench-go/dynabench/internal/bench"
)

// Task says how to write a valid example for one task.
type Task struct {
	Code   string
	Text   string   // the free-text input field
	Labels []string // the label field's values; nil for extractive QA (the answer is a span)
}

// DemoTasks are the four demo tasks.
var DemoTasks = []Task{
	{"sentiment", "statement", []string{"positive", "negative", "neutral"}},
	{"nli", "hypothesis", []string{"entailed", "neutral", "contradictory"}},
	{"hs", "statement", []string{"hateful", "not-hateful"}},
	{"qa", "question", nil},
}

// Config is one soak run.
type Config struct {
	BaseURL    string   // http://127.0.0.1:port
	Annotators []string // one bearer token per annotator
	Validators []string // one bearer token per validator
	Tasks      []Task   // DemoTasks when nil
	Duration   time.Duration
	Interval   time.Duration // between samples (1 s when zero)
	// Memory reports the server's memory; nil samples this process (the server in-process).
	Memory func() Memory
	Seed   uint64
}

// Memory is one memory reading, in bytes.
type Memory struct {
	LiveHeap uint64 // heap in use after a GC
	RSS      uint64 // resident set size; 0 when unknown
}

// Sample is one interval of the run.
type Sample struct {
	At          time.Duration // since the start
	Examples    int           // examples acknowledged (201) in the interval
	Validations int           // validations acknowledged (201) in the interval
	Requests    int           // requests answered or failed in the interval
	Errors      int           // transport failures, 5xx, and 4xx no correct client should get
	Memory      Memory
}

// Report is what a run did.
type Report struct {
	Duration    time.Duration
	Samples     []Sample
	Requests    int
	Errors      int
	ErrorTexts  []string                 // the first few errors
	Examples    map[int64]bool           // acknowledged example ids
	Validations map[int64]map[string]int // acknowledged votes per example id and label
	Conflicts   int                      // 409 on a validation (resolved meanwhile): expected, no error
}

// ErrorRate is errors over requests.
func (r *Report) ErrorRate() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Errors) / float64(r.Requests)
}

// counts is what the clients add to between samples.
type counts struct {
	examples, validations, requests, errors, conflicts atomic.Int64
}

type runner struct {
	cfg    Config
	hc     *http.Client
	c      counts
	mu     sync.Mutex
	report *Report
}

// Run drives the load for cfg.Duration (or until ctx ends) and returns the report.
func Run(ctx context.Context, cfg Config) *Report {
	if cfg.Tasks == nil {
		cfg.Tasks = DemoTasks
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Memory == nil {
		cfg.Memory = SelfMemory
	}
	r := &runner{cfg: cfg, hc: bench.NewClient(len(cfg.Annotators) + len(cfg.Validators)),
		report: &Report{Examples: map[int64]bool{}, Validations: map[int64]map[string]int{}}}
	defer r.hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
	for i, tok := range cfg.Annotators {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(1000+i)))
		wg.Go(func() { r.annotate(ctx, tok, rng) })
	}
	for i, tok := range cfg.Validators {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(2000+i)))
		wg.Go(func() { r.validate(ctx, tok, rng) })
	}
	start := time.Now()
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			r.report.Samples = append(r.report.Samples, r.sample(time.Since(start)))
		}
	}
	wg.Wait()
	r.report.Duration = time.Since(start)
	// What was answered after the last tick: a sample of its own, or folded into the last one
	// when the run ended just after it.
	last := r.sample(r.report.Duration)
	if n := len(r.report.Samples); n > 0 && last.At-r.report.Samples[n-1].At < cfg.Interval/2 {
		prev := &r.report.Samples[n-1]
		prev.Examples += last.Examples
		prev.Validations += last.Validations
		prev.Requests += last.Requests
		prev.Errors += last.Errors
	} else {
		r.report.Samples = append(r.report.Samples, last)
	}
	r.report.Conflicts = int(r.c.conflicts.Load())
	return r.report
}

func (r *runner) sample(at time.Duration) Sample {
	s := Sample{At: at, Examples: int(r.c.examples.Swap(0)), Validations: int(r.c.validations.Swap(0)),
		Requests: int(r.c.requests.Swap(0)), Errors: int(r.c.errors.Swap(0)), Memory: r.cfg.Memory()}
	r.report.Requests += s.Requests
	r.report.Errors += s.Errors
	return s
}

// SelfMemory reads this process's live heap (after a GC) and RSS.
func SelfMemory() Memory {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Memory{LiveHeap: ms.HeapInuse, RSS: rss()}
}

// do sends one request and returns the status and body; status 0 is a transport failure.
func (r *runner) do(ctx context.Context, token, method, path string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.cfg.BaseURL+path, rd)
	if err != nil {
		return 0, []byte(err.Error())
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, []byte(err.Error())
	}
	return resp.StatusCode, b
}

// answered counts one request; a failure that is not the run ending is an error unless ok.
func (r *runner) answered(ctx context.Context, what string, status int, body []byte, ok ...int) bool {
	if ctx.Err() != nil && status == 0 {
		return false // cut off by the end of the run: neither a request nor an error
	}
	r.c.requests.Add(1)
	for _, s := range ok {
		if status == s {
			return true
		}
	}
	r.c.errors.Add(1)
	r.mu.Lock()
	if len(r.report.ErrorTexts) < 10 {
		r.report.ErrorTexts = append(r.report.ErrorTexts, fmt.Sprintf("%s: %d %.200s", what, status, body))
	}
	r.mu.Unlock()
	return false
}

var phrases = strings.Fields("the staff were polite but food arrived cold nobody seemed to mind long wait " +
	"exactly what advert promised nothing more second half really comes alive honestly best part drive home")

func sentence(rng *rand.Rand) string {
	w := make([]string, 6+rng.IntN(8))
	for i := range w {
		w[i] = phrases[rng.IntN(len(phrases))]
	}
	return strings.Join(w, " ")
}

func (r *runner) annotate(ctx context.Context, token string, rng *rand.Rand) {
	for ctx.Err() == nil {
		t := r.cfg.Tasks[rng.IntN(len(r.cfg.Tasks))]
		status, b := r.do(ctx, token, http.MethodGet, "/api/v1/tasks/"+t.Code+"/context", nil)
		if !r.answered(ctx, "GET context", status, b, http.StatusOK) {
			continue
		}
		var cx struct {
			ID      string         `json:"id"`
			Context map[string]any `json:"context"`
		}
		json.Unmarshal(b, &cx)
		input := map[string]any{t.Text: sentence(rng)}
		if t.Labels != nil {
			input["label"] = t.Labels[rng.IntN(len(t.Labels))]
		} else {
			passage, _ := cx.Context["context"].(string)
			input["answer"] = bench.Span(rng, passage)
		}
		status, b = r.do(ctx, token, http.MethodPost, "/api/v1/tasks/"+t.Code+"/examples",
			map[string]any{"context_id": cx.ID, "input": input})
		if !r.answered(ctx, "POST example", status, b, http.StatusCreated) {
			continue
		}
		var eb struct {
			Example struct {
				ID string `json:"id"`
			} `json:"example"`
		}
		var id int64
		if json.Unmarshal(b, &eb) == nil {
			fmt.Sscan(eb.Example.ID, &id)
		}
		r.mu.Lock()
		r.report.Examples[id] = true
		r.mu.Unlock()
		r.c.examples.Add(1)
	}
}

var votes = []string{"correct", "correct", "correct", "incorrect", "flagged"}

func (r *runner) validate(ctx context.Context, token string, rng *rand.Rand) {
	for ctx.Err() == nil {
		t := r.cfg.Tasks[rng.IntN(len(r.cfg.Tasks))]
		status, b := r.do(ctx, token, http.MethodGet, "/api/v1/tasks/"+t.Code+"/validations/next", nil)
		if !r.answered(ctx, "GET validations/next", status, b, http.StatusOK, http.StatusNoContent) {
			continue
		}
		if status == http.StatusNoContent {
			pause(ctx, 20*time.Millisecond)
			continue
		}
		var eb struct {
			Example struct {
				ID string `json:"id"`
			} `json:"example"`
		}
		json.Unmarshal(b, &eb)
		label := votes[rng.IntN(len(votes))]
		status, b = r.do(ctx, token, http.MethodPost, "/api/v1/examples/"+eb.Example.ID+"/validations", map[string]any{"label": label})
		if status == http.StatusConflict { // resolved by others meanwhile
			r.c.requests.Add(1)
			r.c.conflicts.Add(1)
			continue
		}
		if !r.answered(ctx, "POST validation", status, b, http.StatusCreated) {
			continue
		}
		var id int64
		fmt.Sscan(eb.Example.ID, &id)
		r.mu.Lock()
		if r.report.Validations[id] == nil {
			r.report.Validations[id] = map[string]int{}
		}
		r.report.Validations[id][label]++
		r.mu.Unlock()
		r.c.validations.Add(1)
	}
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
