package e2e

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Outages of the database under load, with the real binary: requests fail fast with 503
// "unavailable" while the database cannot take them, the server recovers by itself (it is never
// restarted), and nothing acknowledged is lost (the crash test's ledger and checks).

const (
	failFastBound = 5 * time.Second  // every request answers within this while the database is down
	recoverBound  = 30 * time.Second // writes succeed again within this once it is back
)

// accounts logs the admin in and registers n users through the API; it returns their tokens and
// each demo task's num_matching_validations.
func accounts(t *testing.T, srv *serverProc, names []string) (map[string]string, map[string]int) {
	t.Helper()
	hc := newHTTPClient()
	defer hc.CloseIdleConnections()
	anon := &apiClient{base: srv.base, hc: hc}
	var auth struct {
		Token string `json:"token"`
	}
	anon.mustDo(t, http.MethodPost, "/api/v1/auth/login", map[string]any{"username": "admin", "password": adminPassword}, &auth, 200)
	tokens := map[string]string{"admin": auth.Token}
	for _, u := range names {
		anon.mustDo(t, http.MethodPost, "/api/v1/auth/register",
			map[string]any{"username": u, "email": u + "@example.com", "password": userPassword}, &auth, 201)
		tokens[u] = auth.Token
	}
	admin := &apiClient{base: srv.base, token: tokens["admin"], hc: hc}
	need := map[string]int{}
	for _, spec := range demoTasks {
		var task struct {
			Settings struct {
				NumMatching int `json:"num_matching_validations"`
			} `json:"settings"`
		}
		admin.mustDo(t, http.MethodGet, "/api/v1/tasks/"+spec.code, nil, &task, 200)
		need[spec.code] = task.Settings.NumMatching
	}
	return tokens, need
}

// loadRun is a workload running in the background until stop.
type loadRun struct {
	w      *workload
	cancel context.CancelFunc
	wg     sync.WaitGroup
	hc     *http.Client
}

func startLoad(srv *serverProc, l *ledger, tokens map[string]string, writers, validators []string, seq *atomic.Int64) *loadRun {
	hc := newHTTPClient()
	w := &workload{l: l, clients: map[string]*apiClient{}, seq: seq, outage: true}
	for u, tok := range tokens {
		w.clients[u] = &apiClient{base: srv.base, token: tok, hc: hc}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &loadRun{w: w, cancel: cancel, hc: hc}
	for i, u := range writers {
		for k := 0; k < 2; k++ {
			rng := rand.New(rand.NewPCG(7, uint64(100+10*i+k)))
			r.wg.Go(func() { w.writer(ctx, u, rng) })
		}
	}
	for i, u := range validators {
		rng := rand.New(rand.NewPCG(7, uint64(200+i)))
		r.wg.Go(func() { w.validator(ctx, u, rng) })
	}
	return r
}

func (r *loadRun) stop() {
	r.cancel()
	r.wg.Wait()
	r.hc.CloseIdleConnections()
}

func (l *ledger) acked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cycle.examples
}

// probe is one timed request made while the database was down.
type probe struct {
	what    string
	status  int
	code    string
	elapsed time.Duration
	err     error
}

// probeOnce sends the three kinds of request an outage must answer fast: a readiness check, a
// read that needs the database, and a write (an example, recorded in the ledger like any other).
func probeOnce(srv *serverProc, w *workload, user, contextID string, rng *rand.Rand) []probe {
	c := w.clients[user]
	var out []probe
	timed := func(what, method, path string, body any) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*failFastBound)
		defer cancel()
		began := time.Now()
		status, b, err := c.do(ctx, method, path, body)
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal(b, &e)
		out = append(out, probe{what, status, e.Error.Code, time.Since(began), err})
	}
	timed("GET /readyz", http.MethodGet, "/readyz", nil)
	timed("GET context", http.MethodGet, "/api/v1/tasks/sentiment/context", nil)
	began := time.Now()
	status, err := w.submit(context.Background(), user, demoTasks[0], contextID, nil, rng)
	out = append(out, probe{what: "POST example", status: status, code: "unavailable", elapsed: time.Since(began), err: err})
	return out
}

func TestPostgresRestartUnderLoad(t *testing.T) {
	bin := binary(t)
	pg := newPGCluster(t)
	dataDir := t.TempDir()
	srv := startServer(t, bin, pg.URL(), dataDir, 0)
	users := []string{"pg1", "pg2", "pg3", "pg4"}
	tokens, need := accounts(t, srv, users)
	clientTokens := map[string]string{}
	for _, u := range users {
		clientTokens[u] = tokens[u]
	}
	l := newLedger()
	var seq atomic.Int64
	load := startLoad(srv, l, clientTokens, users[:3], users[1:], &seq)
	defer load.stop()

	time.Sleep(1500 * time.Millisecond)
	before := l.acked()
	if before == 0 {
		t.Fatal("no example acknowledged before the outage")
	}
	var cx struct {
		ID string `json:"id"`
	}
	(&apiClient{base: srv.base, token: tokens["pg4"], hc: load.hc}).mustDo(t, http.MethodGet, "/api/v1/tasks/sentiment/context", nil, &cx, 200)

	// Outage: a crash of PostgreSQL as far as its data goes, every connection dropped at once.
	pg.stop("immediate")
	down := time.Now()
	rng := rand.New(rand.NewPCG(9, 9))
	var probes []probe
	for time.Since(down) < 3*time.Second {
		probes = append(probes, probeOnce(srv, load.w, "pg4", cx.ID, rng)...)
		time.Sleep(100 * time.Millisecond)
	}
	during := l.acked() - before
	slowest := time.Duration(0)
	bad := 0
	for _, p := range probes {
		slowest = max(slowest, p.elapsed)
		if p.err != nil || p.status != http.StatusServiceUnavailable || p.code != "unavailable" || p.elapsed > failFastBound {
			if bad++; bad <= 5 {
				t.Errorf("while PostgreSQL is down: %s answered %d %q in %s (err %v); want 503 unavailable within %s",
					p.what, p.status, p.code, p.elapsed.Round(time.Millisecond), p.err, failFastBound)
			}
		}
	}

	// Back up: the same server process recovers without a restart.
	startTook := pg.start()
	up := time.Now()
	var recovered time.Duration
	for time.Since(up) < recoverBound {
		if status, _ := load.w.submit(context.Background(), "pg4", demoTasks[0], cx.ID, nil, rng); status == http.StatusCreated {
			recovered = time.Since(up)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if recovered == 0 {
		t.Fatalf("no write succeeded within %s of PostgreSQL accepting connections again; server log:\n%s\nPostgreSQL log:\n%s",
			recoverBound, srv.logTail(20), pg.logTail(20))
	}
	afterUp := l.acked()
	time.Sleep(1500 * time.Millisecond)
	load.stop()
	after := l.acked() - afterUp
	if after == 0 {
		t.Error("the load acknowledged nothing after the recovery")
	}
	if srv.exited() {
		t.Fatalf("the server exited: %v\n%s", srv.waitErr, srv.logTail(30))
	}

	l.mu.Lock()
	unexpected := append([]string(nil), l.unexpected...)
	l.mu.Unlock()
	if len(unexpected) > 0 {
		sort.Strings(unexpected)
		t.Errorf("%d unexpected answer(s) under load, e.g.:\n%s", len(unexpected), strings.Join(unexpected[:min(len(unexpected), 20)], "\n"))
	}
	verify(t, srv, l, tokens, need)
	if drift, code, stderr := doctor(t, bin, pg.URL()); code != 0 || len(drift) > 0 {
		t.Errorf("doctor exit %d, drift %+v %s", code, drift, stderr)
	}
	if p := unexpectedLogProblems(srv); len(p) > 0 {
		t.Errorf("the server logged problems:\n%s", strings.Join(p[:min(len(p), 20)], "\n"))
	}
	t.Logf("PostgreSQL down for %s: %d probe(s), slowest answer %s, %d not a fast 503; the load saw %d 503(s) and %d write(s) of unknown outcome; %d example(s) acknowledged before, %d during (in flight at the stop), %d after; pg_ctl start took %s, first write %s after it; nothing acknowledged lost",
		up.Sub(down).Round(10*time.Millisecond), len(probes), slowest.Round(time.Millisecond), bad, load.w.unavailable.Load(),
		l.cycle.unknown, before, during, after, startTook.Round(10*time.Millisecond), recovered.Round(time.Millisecond))
}

// unexpectedLogProblems is logProblems less the request lines of 503 answers, which an outage
// is expected to produce (and which are logged at error level, for operators to see).
func unexpectedLogProblems(srv *serverProc) []string {
	var out []string
	for _, line := range srv.logProblems() {
		if strings.Contains(line, `"msg":"request"`) && strings.Contains(line, `"status":503`) {
			continue
		}
		out = append(out, line)
	}
	return out
}
