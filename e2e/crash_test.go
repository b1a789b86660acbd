package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// The crash test: clients write examples, validations and retracts while the server is SIGKILLed;
// after each restart every acknowledged write must be there, nothing must be there that nobody
// wrote, and every counter must agree with the rows (through the API and `dynabench doctor`).
//
// What "acknowledged" means: the client read the whole 2xx answer. A request whose connection died
// is "unknown": the server may or may not have committed it, and the checks allow both (an unknown
// example may exist once at most, an unknown vote may be counted or not).

const (
	crashCycles   = 3                       // kill/restart cycles per engine
	loadFor       = 1500 * time.Millisecond // minimum load before each kill (plus up to 400 ms jitter)
	minAckedCycle = 25                      // and at least this many acknowledged examples per cycle
	maxLoadFor    = 10 * time.Second        // but never longer
	userPassword  = "e2e-user-password-1"
)

// taskSpec says how to write a valid example for one demo task.
type taskSpec struct {
	code   string
	text   string   // the free-text input field
	labels []string // the label field's values; nil for QA (answer is a span of the context)
}

var demoTasks = []taskSpec{
	{"sentiment", "statement", []string{"positive", "negative", "neutral"}},
	{"nli", "hypothesis", []string{"entailed", "neutral", "contradictory"}},
	{"hs", "statement", []string{"hateful", "not-hateful"}},
	{"qa", "question", nil},
}

var phrases = []string{
	"the staff were polite but the food arrived cold",
	"I suppose it could have been worse, all things considered",
	"nobody there seemed to mind the long wait at all",
	"it is exactly what the advert promised and nothing more",
	"they say the second half is where it really comes alive",
	"a few people left early, the rest stayed until the end",
	"honestly the best part was the drive home afterwards",
	"some of them were thrilled while others felt nothing",
}

var nonceRE = regexp.MustCompile(`\[e2e:([A-Za-z0-9_-]+)\]`)

// --- what the API returns ---

type counts struct {
	Correct   int `json:"correct"`
	Incorrect int `json:"incorrect"`
	Flagged   int `json:"flagged"`
}

func (c counts) of(label string) int {
	switch label {
	case "correct":
		return c.Correct
	case "incorrect":
		return c.Incorrect
	case "flagged":
		return c.Flagged
	}
	return -1
}

type exampleJSON struct {
	ID          string         `json:"id"`
	Task        string         `json:"task"`
	Round       int            `json:"round"`
	ContextID   string         `json:"context_id"`
	Input       map[string]any `json:"input"`
	ModelWrong  *bool          `json:"model_wrong"`
	ModelError  string         `json:"model_error"`
	Status      string         `json:"status"`
	Validations counts         `json:"validations"`
}

type exampleBody struct {
	Example exampleJSON `json:"example"`
}

type roundStats struct {
	Collected      int64   `json:"collected"`
	Fooled         int64   `json:"fooled"`
	VerifiedFooled int64   `json:"verified_fooled"`
	Rejected       int64   `json:"rejected"`
	MER            float64 `json:"mer"`
	VMER           float64 `json:"vmer"`
}

type userStats struct {
	Examples       int64 `json:"examples"`
	Fooled         int64 `json:"fooled"`
	VerifiedFooled int64 `json:"verified_fooled"`
	RejectedFooled int64 `json:"rejected_fooled"`
	Retracted      int64 `json:"retracted"`
	Validations    int64 `json:"validations"`
}

// --- what the clients did ---

// written is one attempted example; id is 0 until it was acknowledged or found after a restart.
type written struct {
	nonce, task, user, contextID string
	input                        map[string]any // as JSON would give it back
	id                           int64
	acked                        bool
}

type voteKey struct {
	example int64
	user    string
}

// vote is one validator's vote on one example. A retry after an unknown outcome reuses the label,
// so whichever attempt committed, the label is known.
type vote struct {
	task  string
	label string
	acked bool
}

type cycleFigures struct {
	examples, votes, retracts int // acknowledged in the cycle
	unknown                   int // writes whose outcome the clients could not know
	inflight                  int64
}

// ledger records every write the clients attempted and which were acknowledged.
type ledger struct {
	mu         sync.Mutex
	byNonce    map[string]*written
	byID       map[int64]*written
	own        map[string][]int64 // user → acknowledged example ids, for retracts
	retracts   map[int64]bool     // attempted retracts → acknowledged
	votes      map[voteKey]*vote
	cycle      cycleFigures
	unexpected []string
}

func newLedger() *ledger {
	return &ledger{byNonce: map[string]*written{}, byID: map[int64]*written{}, own: map[string][]int64{},
		retracts: map[int64]bool{}, votes: map[voteKey]*vote{}}
}

func (l *ledger) oops(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unexpected = append(l.unexpected, fmt.Sprintf(format, args...))
}

// workload drives one load cycle against one server.
type workload struct {
	l        *ledger
	clients  map[string]*apiClient
	seq      *atomic.Int64
	inflight atomic.Int64
	// outage makes 503 an expected answer (the database is down): a write answered 503 is of
	// unknown outcome (the commit may have happened before the connection died), a read is retried.
	outage      bool
	unavailable atomic.Int64 // 503 answers seen
}

// down reports (and counts) a 503 answer that the workload expects.
func (w *workload) down(status int) bool {
	if w.outage && status == http.StatusServiceUnavailable {
		w.unavailable.Add(1)
		return true
	}
	return false
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func jsonRoundTrip(v map[string]any) map[string]any {
	b, _ := json.Marshal(v)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}

// span picks 1 to 3 consecutive words of the passage, a valid QA answer.
func span(passage string, rng *rand.Rand) string {
	words := strings.Fields(passage)
	if len(words) == 0 {
		return passage
	}
	i := rng.IntN(len(words))
	j := min(len(words), i+1+rng.IntN(3))
	s := strings.Trim(strings.Join(words[i:j], " "), ".,;:!?\"'()")
	if s == "" || !strings.Contains(passage, s) {
		s = strings.Trim(words[0], ".,;:!?\"'()")
	}
	return s
}

func (w *workload) writer(ctx context.Context, user string, rng *rand.Rand) {
	c := w.clients[user]
	for ctx.Err() == nil {
		spec := demoTasks[rng.IntN(len(demoTasks))]
		status, b, err := c.do(ctx, http.MethodGet, "/api/v1/tasks/"+spec.code+"/context", nil)
		if err != nil {
			pause(ctx, 10*time.Millisecond)
			continue
		}
		if w.down(status) {
			pause(ctx, 10*time.Millisecond)
			continue
		}
		if status != http.StatusOK {
			w.l.oops("GET context %s as %s: %d %s", spec.code, user, status, b)
			pause(ctx, 10*time.Millisecond)
			continue
		}
		var cx struct {
			ID      string         `json:"id"`
			Context map[string]any `json:"context"`
		}
		if err := json.Unmarshal(b, &cx); err != nil {
			w.l.oops("GET context %s: %v: %s", spec.code, err, b)
			continue
		}
		if status, _ := w.submit(ctx, user, spec, cx.ID, cx.Context, rng); status != http.StatusCreated {
			if status == 0 || status == http.StatusServiceUnavailable {
				pause(ctx, 10*time.Millisecond)
			}
			continue
		}

		if rng.IntN(8) == 0 {
			w.retractOne(ctx, user, rng)
		}
	}
}

// submit writes one example of the task against the context as user, records it in the ledger
// (acknowledged, refused or of unknown outcome) and returns the status (0 when the request failed
// in transport, with the error).
func (w *workload) submit(ctx context.Context, user string, spec taskSpec, cxID string, cxData map[string]any, rng *rand.Rand) (int, error) {
	nonce := fmt.Sprintf("%s-%d", user, w.seq.Add(1))
	text := fmt.Sprintf("%s [e2e:%s]", phrases[rng.IntN(len(phrases))], nonce)
	input := map[string]any{spec.text: text}
	if spec.labels != nil {
		input["label"] = spec.labels[rng.IntN(len(spec.labels))]
	} else {
		passage, _ := cxData["context"].(string)
		input[spec.text] = "Which words of the passage answer this? " + text
		input["answer"] = span(passage, rng)
	}
	rec := &written{nonce: nonce, task: spec.code, user: user, contextID: cxID, input: jsonRoundTrip(input)}
	w.l.mu.Lock()
	w.l.byNonce[nonce] = rec
	w.l.mu.Unlock()

	w.inflight.Add(1)
	status, b, err := w.clients[user].do(ctx, http.MethodPost, "/api/v1/tasks/"+spec.code+"/examples",
		map[string]any{"context_id": cxID, "input": input})
	w.inflight.Add(-1)
	switch {
	case err != nil:
		w.l.mu.Lock()
		w.l.cycle.unknown++
		w.l.mu.Unlock()
		return 0, err
	case w.down(status):
		w.l.mu.Lock()
		w.l.cycle.unknown++
		w.l.mu.Unlock()
		return status, nil
	case status != http.StatusCreated:
		// Refused, so nothing was stored; but a valid example should never be refused.
		w.l.mu.Lock()
		delete(w.l.byNonce, nonce)
		w.l.mu.Unlock()
		w.l.oops("POST example %s as %s: %d %s", spec.code, user, status, b)
		return status, nil
	}
	var eb exampleBody
	if err := json.Unmarshal(b, &eb); err != nil {
		w.l.oops("POST example: 201 with bad JSON: %v: %s", err, b)
		return status, nil
	}
	id, _ := strconv.ParseInt(eb.Example.ID, 10, 64)
	if id <= 0 || !reflect.DeepEqual(eb.Example.Input, rec.input) {
		w.l.oops("POST example: 201 with id %q, input %v; sent %v", eb.Example.ID, eb.Example.Input, rec.input)
	}
	w.l.mu.Lock()
	rec.id, rec.acked = id, true
	w.l.byID[id] = rec
	w.l.own[user] = append(w.l.own[user], id)
	w.l.cycle.examples++
	w.l.mu.Unlock()
	return status, nil
}

// retractOne retracts one of the user's acknowledged examples not retracted before.
func (w *workload) retractOne(ctx context.Context, user string, rng *rand.Rand) {
	w.l.mu.Lock()
	var id int64
	own := w.l.own[user]
	for try := 0; try < 5 && len(own) > 0; try++ {
		cand := own[rng.IntN(len(own))]
		if _, done := w.l.retracts[cand]; !done {
			id = cand
			break
		}
	}
	if id == 0 {
		w.l.mu.Unlock()
		return
	}
	w.l.retracts[id] = false
	w.l.mu.Unlock()

	w.inflight.Add(1)
	status, b, err := w.clients[user].do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/examples/%d/retract", id), nil)
	w.inflight.Add(-1)
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	switch {
	case err != nil, w.down(status):
		w.l.cycle.unknown++
	case status == http.StatusOK:
		w.l.retracts[id] = true
		w.l.cycle.retracts++
	default:
		w.l.unexpected = append(w.l.unexpected, fmt.Sprintf("retract %d as %s: %d %s", id, user, status, b))
	}
}

var voteLabels = []string{"correct", "correct", "correct", "incorrect", "incorrect", "flagged"}

func (w *workload) validator(ctx context.Context, user string, rng *rand.Rand) {
	c := w.clients[user]
	idle := 0
	for ctx.Err() == nil {
		spec := demoTasks[rng.IntN(len(demoTasks))]
		status, b, err := c.do(ctx, http.MethodGet, "/api/v1/tasks/"+spec.code+"/validations/next", nil)
		if err != nil {
			pause(ctx, 10*time.Millisecond)
			continue
		}
		if status == http.StatusNoContent {
			if idle++; idle >= len(demoTasks) {
				idle = 0
				pause(ctx, 5*time.Millisecond)
			}
			continue
		}
		if w.down(status) {
			pause(ctx, 10*time.Millisecond)
			continue
		}
		if status != http.StatusOK {
			w.l.oops("GET validations/next %s as %s: %d %s", spec.code, user, status, b)
			pause(ctx, 10*time.Millisecond)
			continue
		}
		idle = 0
		var eb exampleBody
		if err := json.Unmarshal(b, &eb); err != nil {
			w.l.oops("validations/next: %v: %s", err, b)
			continue
		}
		id, _ := strconv.ParseInt(eb.Example.ID, 10, 64)
		key := voteKey{id, user}
		w.l.mu.Lock()
		v := w.l.votes[key]
		retry := v != nil
		if v == nil {
			v = &vote{task: spec.code, label: voteLabels[rng.IntN(len(voteLabels))]}
			w.l.votes[key] = v
		} else if v.acked {
			w.l.mu.Unlock()
			w.l.oops("validations/next %s as %s offered example %d, which this user's acknowledged vote already covers", spec.code, user, id)
			continue
		}
		label := v.label
		w.l.mu.Unlock()

		w.inflight.Add(1)
		status, b, err = c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/examples/%d/validations", id), map[string]any{"label": label})
		w.inflight.Add(-1)
		w.l.mu.Lock()
		switch {
		case err != nil, w.down(status):
			w.l.cycle.unknown++
		case status == http.StatusCreated:
			v.acked = true
			w.l.cycle.votes++
		case status == http.StatusConflict:
			// Resolved or retracted meanwhile (or, after a retry, the first attempt did commit): nothing
			// new was stored. Forget the vote unless an earlier attempt may have committed.
			if !retry {
				delete(w.l.votes, key)
			}
		default:
			if !retry {
				delete(w.l.votes, key)
			}
			w.l.unexpected = append(w.l.unexpected, fmt.Sprintf("validate %d as %s: %d %s", id, user, status, b))
		}
		w.l.mu.Unlock()
	}
}

// runLoad runs the clients until the server is killed, and returns what was acknowledged.
func runLoad(t *testing.T, srv *serverProc, l *ledger, tokens map[string]string, writers, validators []string,
	seq *atomic.Int64, seed uint64) cycleFigures {
	t.Helper()
	hc := newHTTPClient()
	defer hc.CloseIdleConnections()
	w := &workload{l: l, clients: map[string]*apiClient{}, seq: seq}
	for u, tok := range tokens {
		w.clients[u] = &apiClient{base: srv.base, token: tok, hc: hc}
	}
	l.mu.Lock()
	l.cycle = cycleFigures{}
	l.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i, u := range writers {
		for k := 0; k < 2; k++ {
			rng := rand.New(rand.NewPCG(seed, uint64(100+10*i+k)))
			wg.Go(func() { w.writer(ctx, u, rng) })
		}
	}
	for i, u := range validators {
		rng := rand.New(rand.NewPCG(seed, uint64(200+i)))
		wg.Go(func() { w.validator(ctx, u, rng) })
	}
	start := time.Now()
	jitter := time.Duration(rand.N(400)) * time.Millisecond
	for {
		time.Sleep(20 * time.Millisecond)
		l.mu.Lock()
		n := l.cycle.examples
		l.mu.Unlock()
		el := time.Since(start)
		if (el >= loadFor+jitter && n >= minAckedCycle) || el >= maxLoadFor || srv.exited() {
			break
		}
	}
	// Kill while writes are in flight: wait (briefly) for a moment when several are.
	for spin := time.Now(); w.inflight.Load() < 3 && time.Since(spin) < 500*time.Millisecond; {
		time.Sleep(200 * time.Microsecond)
	}
	inflight := w.inflight.Load()
	srv.kill() // SIGKILL
	cancel()
	wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cycle.inflight = inflight
	return l.cycle
}

func TestCrashNoAcknowledgedWriteLost(t *testing.T) {
	bin := binary(t)
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) { crashTest(t, bin, engine) })
	}
}

func crashTest(t *testing.T, bin, engine string) {
	began := time.Now()
	dbURL := sqlstoretest.URL(t, engine)
	dataDir := t.TempDir()
	var runs []*serverProc
	srv := startServer(t, bin, dbURL, dataDir, 0)
	runs = append(runs, srv)

	hc := newHTTPClient()
	defer hc.CloseIdleConnections()
	anon := &apiClient{base: srv.base, hc: hc}
	var auth struct {
		User struct {
			ID string `json:"id"`
		} `json:"user"`
		Token string `json:"token"`
	}
	anon.mustDo(t, http.MethodPost, "/api/v1/auth/login", map[string]any{"username": "admin", "password": adminPassword}, &auth, 200)
	tokens := map[string]string{"admin": auth.Token}

	// Six users: four register through the API (the limit is five a minute per address), two are
	// made by an operator with the CLI while the server runs and then log in.
	users := []string{"crash1", "crash2", "crash3", "crash4", "crash5", "crash6"}
	for _, u := range users[:4] {
		anon.mustDo(t, http.MethodPost, "/api/v1/auth/register",
			map[string]any{"username": u, "email": u + "@example.com", "password": userPassword}, &auth, 201)
		tokens[u] = auth.Token
	}
	for _, u := range users[4:] {
		out, errOut, code := runCLI(t, bin, userPassword+"\n", "user", "create", "--password-stdin",
			"--username", u, "--email", u+"@example.com", "--database-url", dbURL)
		if code != 0 {
			t.Fatalf("user create %s: exit %d: %s %s", u, code, out, errOut)
		}
		anon.mustDo(t, http.MethodPost, "/api/v1/auth/login", map[string]any{"username": u, "password": userPassword}, &auth, 200)
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
		if need[spec.code] <= 0 {
			t.Fatalf("task %s: num_matching_validations %d", spec.code, need[spec.code])
		}
	}
	clientTokens := map[string]string{}
	for _, u := range users {
		clientTokens[u] = tokens[u]
	}
	writers, validators := users[:4], users[2:] // crash3 and crash4 do both

	l := newLedger()
	var seq atomic.Int64
	var total cycleFigures
	recovered := 0
	for cycle := 1; cycle <= crashCycles; cycle++ {
		fig := runLoad(t, srv, l, clientTokens, writers, validators, &seq, uint64(cycle))
		t.Logf("%s kill %d: SIGKILL with %d write(s) in flight; this cycle %d example(s), %d validation(s), %d retract(s) acknowledged, %d write(s) of unknown outcome",
			engine, cycle, fig.inflight, fig.examples, fig.votes, fig.retracts, fig.unknown)
		total.examples += fig.examples
		total.votes += fig.votes
		total.retracts += fig.retracts
		total.unknown += fig.unknown
		total.inflight += fig.inflight

		srv = startServer(t, bin, dbURL, dataDir, cycle)
		runs = append(runs, srv)
		r := verify(t, srv, l, tokens, need)
		recovered += r
		drift, code, stderr := doctor(t, bin, dbURL)
		if code != 0 || len(drift) > 0 {
			t.Errorf("%s after kill %d: doctor exit %d, drift %+v %s", engine, cycle, code, drift, stderr)
		}
		if t.Failed() {
			break
		}
	}
	srv.kill()

	l.mu.Lock()
	if n := len(l.unexpected); n > 0 {
		show := l.unexpected[:min(n, 20)]
		t.Errorf("%d unexpected answer(s) under load, e.g.:\n%s", n, strings.Join(show, "\n"))
	}
	l.mu.Unlock()
	for i, r := range runs {
		if p := r.logProblems(); len(p) > 0 {
			t.Errorf("server run %d logged problems:\n%s", i, strings.Join(p[:min(len(p), 40)], "\n"))
		}
	}
	if t.Failed() {
		for i, r := range runs {
			t.Logf("server run %d, last log lines other than requests:\n%s", i, r.logTail(15))
		}
		return
	}
	t.Logf("%s: %d kills, %d acknowledged examples, %d validations, %d retracts, 0 lost; %d write(s) in flight at the kills, %d of unknown outcome (%d of those examples were committed); %s",
		engine, crashCycles, total.examples, total.votes, total.retracts, total.inflight, total.unknown, recovered,
		time.Since(began).Round(100*time.Millisecond))
}

// verify checks the restarted server against the ledger and returns how many examples of unknown
// outcome it found committed (first seen in this check).
func verify(t *testing.T, srv *serverProc, l *ledger, tokens map[string]string, need map[string]int) int {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	hc := newHTTPClient()
	defer hc.CloseIdleConnections()
	client := func(user string) *apiClient { return &apiClient{base: srv.base, token: tokens[user], hc: hc} }
	admin := client("admin")

	// Every example in the database, as the admin sees it: ids from 1 past the highest known id
	// until a run of 64 misses (ids are not reused, but a rolled-back insert may leave a gap).
	var maxKnown int64
	for id := range l.byID {
		maxKnown = max(maxKnown, id)
	}
	all := map[int64]exampleJSON{}
	var mu sync.Mutex
	var scanErrs []string
	lo, hi := int64(1), maxKnown+64
	for {
		parallel(int(hi-lo+1), 8, func(i int) {
			id := lo + int64(i)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			status, b, err := admin.do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/examples/%d", id), nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				scanErrs = append(scanErrs, fmt.Sprintf("GET example %d: %v", id, err))
			case status == http.StatusOK:
				var eb exampleBody
				if err := json.Unmarshal(b, &eb); err != nil {
					scanErrs = append(scanErrs, fmt.Sprintf("GET example %d: %v", id, err))
				}
				all[id] = eb.Example
			case status != http.StatusNotFound:
				scanErrs = append(scanErrs, fmt.Sprintf("GET example %d as admin: %d %s", id, status, b))
			}
		})
		top := int64(0)
		for id := range all {
			top = max(top, id)
		}
		if top <= hi-64 {
			break
		}
		lo, hi = hi+1, top+64
	}
	if len(scanErrs) > 0 {
		t.Fatalf("scanning examples: %d error(s): %s", len(scanErrs), strings.Join(scanErrs[:min(5, len(scanErrs))], "; "))
	}

	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	recovered := 0

	// Every stored example was written by someone: its nonce names one attempt, at most once.
	ids := make([]int64, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		ex := all[id]
		nonce := nonceOf(ex)
		rec := l.byNonce[nonce]
		switch {
		case rec == nil:
			bad("example %d (%s, input %v) matches no write any client attempted", id, ex.Task, ex.Input)
			continue
		case rec.id != 0 && rec.id != id:
			bad("example %d duplicates example %d (same write %s)", id, rec.id, nonce)
			continue
		case rec.id == 0:
			rec.id = id // committed although its answer never arrived
			l.byID[id] = rec
			recovered++
		}
		if ex.Task != rec.task || ex.ContextID != rec.contextID || ex.Round != 1 || !reflect.DeepEqual(ex.Input, rec.input) {
			bad("example %d is task %s round %d context %s input %v; written as task %s context %s input %v",
				id, ex.Task, ex.Round, ex.ContextID, ex.Input, rec.task, rec.contextID, rec.input)
		}
	}

	// Nothing acknowledged (or seen committed before) is lost, and each is its creator's.
	known := make([]*written, 0, len(l.byID))
	for id, rec := range l.byID {
		if _, ok := all[id]; !ok {
			what := "acknowledged"
			if !rec.acked {
				what = "committed (seen after an earlier restart)"
			}
			bad("LOST: %s example %d (%s by %s, write %s) is gone", what, id, rec.task, rec.user, rec.nonce)
			continue
		}
		known = append(known, rec)
	}
	var cmu sync.Mutex
	parallel(len(known), 8, func(i int) {
		rec := known[i]
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		status, b, err := client(rec.user).do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/examples/%d", rec.id), nil)
		var eb exampleBody
		if err == nil && status == http.StatusOK {
			err = json.Unmarshal(b, &eb)
		}
		if err != nil || status != http.StatusOK || eb.Example.ID != strconv.FormatInt(rec.id, 10) || !reflect.DeepEqual(eb.Example.Input, rec.input) {
			cmu.Lock()
			bad("example %d as its creator %s: status %d, err %v, body %.200s", rec.id, rec.user, status, err, b)
			cmu.Unlock()
		}
	})

	// Retracts: acknowledged ones hold; no example is retracted that nobody tried to retract.
	for id, acked := range l.retracts {
		if ex, ok := all[id]; ok && acked && ex.Status != "retracted" {
			bad("LOST: acknowledged retract of example %d: status is %s", id, ex.Status)
		}
	}
	for id, ex := range all {
		if _, tried := l.retracts[id]; ex.Status == "retracted" && !tried {
			bad("example %d is retracted but nobody tried to retract it", id)
		}
	}

	// Votes: each example's counts lie between its acknowledged votes and those plus the votes of
	// unknown outcome, and its status follows from its counts.
	type bounds struct{ lo, hi counts }
	vb := map[int64]*bounds{}
	add := func(c *counts, label string) {
		switch label {
		case "correct":
			c.Correct++
		case "incorrect":
			c.Incorrect++
		case "flagged":
			c.Flagged++
		}
	}
	for key, v := range l.votes {
		if _, ok := all[key.example]; !ok {
			bad("example %d, validated by %s (acknowledged %v), is gone", key.example, key.user, v.acked)
			continue
		}
		b := vb[key.example]
		if b == nil {
			b = &bounds{}
			vb[key.example] = b
		}
		if v.acked {
			add(&b.lo, v.label)
		}
		add(&b.hi, v.label)
	}
	for id, ex := range all {
		b := vb[id]
		if b == nil {
			b = &bounds{}
		}
		for _, label := range []string{"correct", "incorrect", "flagged"} {
			got := ex.Validations.of(label)
			if got < b.lo.of(label) {
				bad("LOST: example %d counts %d %q vote(s); %d were acknowledged", id, got, label, b.lo.of(label))
			} else if got > b.hi.of(label) {
				bad("example %d counts %d %q vote(s); at most %d were attempted", id, got, label, b.hi.of(label))
			}
		}
		if ex.Status == "retracted" {
			continue
		}
		want := "pending_validation"
		n := need[ex.Task]
		switch c := ex.Validations; {
		case c.Correct >= n:
			want = "verified"
		case c.Incorrect >= n, c.Flagged >= n:
			want = "rejected"
		}
		if ex.Status != want {
			bad("example %d has votes %+v (N=%d) but status %s, want %s", id, ex.Validations, n, ex.Status, want)
		}
	}

	// Round counters (API) against the examples.
	for _, spec := range demoTasks {
		var want roundStats
		for _, ex := range all {
			if ex.Task != spec.code || ex.Round != 1 {
				continue
			}
			fooled := ex.ModelWrong != nil && *ex.ModelWrong
			if ex.Status != "retracted" {
				want.Collected++
				if fooled {
					want.Fooled++
				}
			}
			if ex.Status == "verified" && fooled {
				want.VerifiedFooled++
			}
			if ex.Status == "rejected" {
				want.Rejected++
			}
		}
		var round struct {
			Stats roundStats `json:"stats"`
		}
		admin.mustDo(t, http.MethodGet, "/api/v1/tasks/"+spec.code+"/rounds/1", nil, &round, 200)
		got := round.Stats
		if got.Collected != want.Collected || got.Fooled != want.Fooled || got.VerifiedFooled != want.VerifiedFooled || got.Rejected != want.Rejected {
			bad("round 1 of %s: stats %+v; the examples give collected %d, fooled %d, verified_fooled %d, rejected %d",
				spec.code, got, want.Collected, want.Fooled, want.VerifiedFooled, want.Rejected)
		}
		if want.Collected > 0 {
			if math.Abs(got.MER-float64(got.Fooled)/float64(got.Collected)) > 1e-9 ||
				math.Abs(got.VMER-float64(got.VerifiedFooled)/float64(got.Collected)) > 1e-9 {
				bad("round 1 of %s: mer %v vmer %v disagree with %+v", spec.code, got.MER, got.VMER, got)
			}
		}
	}

	// Each user's counters (GET /me) against the examples they wrote and the votes they cast.
	type ukey struct{ user, task string }
	wantStats := map[ukey]*userStats{}
	votesHi := map[ukey]int64{}
	get := func(k ukey) *userStats {
		if wantStats[k] == nil {
			wantStats[k] = &userStats{}
		}
		return wantStats[k]
	}
	for id, ex := range all {
		rec := l.byNonce[nonceOf(ex)]
		if rec == nil || rec.id != id {
			continue // reported above
		}
		s := get(ukey{rec.user, ex.Task})
		fooled := ex.ModelWrong != nil && *ex.ModelWrong
		switch {
		case ex.Status == "retracted":
			s.Retracted++
		default:
			s.Examples++
			if fooled {
				s.Fooled++
			}
			if fooled && ex.Status == "verified" {
				s.VerifiedFooled++
			}
			if fooled && ex.Status == "rejected" {
				s.RejectedFooled++
			}
		}
	}
	for key, v := range l.votes {
		k := ukey{key.user, all[key.example].Task}
		if v.acked {
			get(k).Validations++
		}
		votesHi[k]++
	}
	for user := range tokens {
		if user == "admin" {
			continue
		}
		var me struct {
			Stats map[string]userStats `json:"stats"`
		}
		client(user).mustDo(t, http.MethodGet, "/api/v1/me", nil, &me, 200)
		for _, spec := range demoTasks {
			k := ukey{user, spec.code}
			got, want := me.Stats[spec.code], get(k)
			if got.Validations >= want.Validations && got.Validations <= votesHi[k] {
				got.Validations = want.Validations // within bounds
			}
			if got != *want {
				bad("GET /me as %s, task %s: %+v; the rows give %+v (validations between %d and %d)",
					user, spec.code, me.Stats[spec.code], *want, want.Validations, votesHi[k])
			}
		}
	}

	if len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("after restart: %d problem(s):\n%s", len(problems), strings.Join(problems[:min(len(problems), 40)], "\n"))
	}
	acked, unknownVotes := 0, 0
	for _, v := range l.votes {
		if v.acked {
			acked++
		} else {
			unknownVotes++
		}
	}
	t.Logf("after restart: %d example(s) in the database, %d known to the clients; %d acknowledged vote(s), %d of unknown outcome; %d unknown example(s) found committed",
		len(all), len(l.byID), acked, unknownVotes, recovered)
	return recovered
}

func nonceOf(ex exampleJSON) string {
	for _, v := range ex.Input {
		if s, ok := v.(string); ok {
			if m := nonceRE.FindStringSubmatch(s); m != nil {
				return m[1]
			}
		}
	}
	return ""
}
