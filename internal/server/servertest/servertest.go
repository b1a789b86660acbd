// Package servertest starts the real server (internal/server) on a random port over a fresh database
// for end-to-end tests of the JSON API, and gives them a small JSON client, users with tokens, and
// models in the loop whose answers the test decides.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// AdminPassword is the password of the bootstrap admin account.
const AdminPassword = "adminpass123"

// Server is a running platform with a test's view of it.
type Server struct {
	*server.Main
	URL    string
	Engine string
	// Models resolves the models that tests register with AddModel, and delegates the rest (the demo
	// tasks' built-in models) to the server's own resolver.
	Models *Resolver
	// AdminID and AdminToken are the bootstrap admin's id and a token of theirs.
	AdminID    int64
	AdminToken string

	client *http.Client
	mu     sync.Mutex
	logs   bytes.Buffer
	// allow500 lets a test that provokes a server error say so; otherwise any 500 fails the test.
	allow500 bool
	saw500   []string
}

// Option changes the server's configuration before it opens.
type Option func(*server.Config)

// NoDemo starts without the demo tasks, for tests that create their own: the demo's built-in
// models are trained at every start, which is the bulk of a start's time under the race detector.
func NoDemo(c *server.Config) { c.Demo = false }

// NoWorkers starts without in-process evaluation workers or the platform's job runner, so that
// queued jobs stay queued until the test leases them itself.
func NoWorkers(c *server.Config) { c.Workers, c.NoPlatformJobs = 0, true }

// Start opens the server over a fresh database of the engine (see sqlstoretest.Engines), with the
// demo tasks, open registration and fast password hashing, serves it on 127.0.0.1 and a free port,
// and shuts it down when t ends. Any 500 answer fails t: the API never answers 500 to input.
func Start(t testing.TB, engine string, opts ...Option) *Server {
	t.Helper()
	cfg := server.Config{Addr: "127.0.0.1:0", DatabaseURL: sqlstoretest.URL(t, engine), DataDir: t.TempDir(), Demo: true,
		OpenRegistration: true, InsecureFastHashing: true, AdminPassword: AdminPassword, Version: "test", Workers: 1}
	for _, o := range opts {
		o(&cfg)
	}
	s := &Server{Engine: engine, client: &http.Client{Timeout: 60 * time.Second}}
	log := slog.New(slog.NewTextHandler(lockedWriter{s}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(context.Background())
	m, err := server.Open(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatalf("open server on %s: %v", engine, err)
	}
	s.Main = m
	s.Models = &Resolver{next: m.Service.Models, fakes: map[int64]dynabench.Predictor{}}
	m.Service.Models = s.Models // before Serve: no request reads it yet
	if err := m.Listen(); err != nil {
		cancel()
		m.Close()
		t.Fatalf("listen: %v", err)
	}
	s.URL = m.URL()
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
		m.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.saw500) > 0 && !s.allow500 {
			t.Errorf("the server answered 500 to: %s", strings.Join(s.saw500, "; "))
		}
		if t.Failed() && s.logs.Len() > 0 {
			t.Logf("server log (warnings and errors):\n%s", s.logs.String())
		}
	})
	admin, token, err := m.Service.Login(context.Background(), "admin", AdminPassword)
	if err != nil {
		t.Fatalf("admin login: %v", err)
	}
	s.AdminID, s.AdminToken = admin.ID, token
	return s
}

type lockedWriter struct{ s *Server }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.s.logs.Len() > 1<<20 {
		return len(p), nil
	}
	return w.s.logs.Write(p)
}

// Allow500 stops the server from failing the test on a 500 answer.
func (s *Server) Allow500() {
	s.mu.Lock()
	s.allow500 = true
	s.mu.Unlock()
}

// User is an account created for a test, with an API token.
type User struct {
	ID       int64
	Username string
	Token    string
}

// User creates an account through the rules (not the rate-limited register route) and an API token.
func (s *Server) User(t testing.TB, username string) *User {
	t.Helper()
	ctx := context.Background()
	u, err := s.Service.CreateUser(ctx, username, username+"@example.com", "password-"+username, false)
	if err != nil {
		t.Fatalf("create user %s: %v", username, err)
	}
	_, token, err := s.Service.CreateAPIToken(ctx, u, "test")
	if err != nil {
		t.Fatalf("token for %s: %v", username, err)
	}
	return &User{ID: u.ID, Username: username, Token: token}
}

// Task returns the stored task by code.
func (s *Server) Task(t testing.TB, code string) *dynabench.Task {
	t.Helper()
	task, err := s.Service.Store.FindTaskByCode(context.Background(), code)
	if err != nil {
		t.Fatalf("task %s: %v", code, err)
	}
	return task
}

// AddModel registers a model of the task whose answers come from p, and returns its id. Put it in
// the loop with PUT /api/v1/tasks/{code}/rounds/{n}/models.
func (s *Server) AddModel(t testing.TB, code, name string, p dynabench.Predictor) int64 {
	t.Helper()
	task := s.Task(t, code)
	m := &dynabench.Model{TaskID: task.ID, UserID: s.AdminID, Name: name, Kind: dynabench.KindDynalab, URL: "http://fake.invalid"}
	if err := s.Service.Store.CreateModel(context.Background(), m); err != nil {
		t.Fatalf("create model: %v", err)
	}
	s.Models.mu.Lock()
	s.Models.fakes[m.ID] = p
	s.Models.mu.Unlock()
	return m.ID
}

// Set makes the model with that id answer with p (a model registered over the API, say).
func (r *Resolver) Set(id int64, p dynabench.Predictor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fakes[id] = p
}

// NoDrift fails t when a recount of the rows disagrees with any stored counter.
func (s *Server) NoDrift(t testing.TB) {
	t.Helper()
	drift, err := s.Service.Store.Recount(context.Background())
	if err != nil {
		t.Fatalf("recount: %v", err)
	}
	for _, d := range drift {
		t.Errorf("counter drift: %s %s %s stored %d, counted %d", d.Table, d.Key, d.Counter, d.Stored, d.Counted)
	}
}

// Resolver hands out the tests' fake predictors and delegates other models.
type Resolver struct {
	next  dynabench.ModelResolver
	mu    sync.Mutex
	fakes map[int64]dynabench.Predictor
}

// Predictor implements dynabench.ModelResolver.
func (r *Resolver) Predictor(ctx context.Context, m *dynabench.Model) (dynabench.Predictor, error) {
	r.mu.Lock()
	p, ok := r.fakes[m.ID]
	r.mu.Unlock()
	if ok {
		return p, nil
	}
	return r.next.Predictor(ctx, m)
}

// Response is an HTTP answer with its body decoded when it is JSON.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   any
}

// Raw is a request body sent as is, with its content type.
type Raw struct {
	ContentType string
	Body        []byte
}

// Do sends a request. body is nil (no body), a Raw, or any value to encode as JSON. token is sent
// as a bearer token when not empty.
func (s *Server) Do(t testing.TB, method, path, token string, body any) *Response {
	t.Helper()
	r, err := s.do(method, path, token, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

func (s *Server) do(method, path, token string, body any) (*Response, error) {
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case Raw:
		rd, ctype = bytes.NewReader(b.Body), b.ContentType
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd, ctype = bytes.NewReader(buf), "application/json"
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := &Response{Status: resp.StatusCode, Header: resp.Header}
	if out.Body, err = io.ReadAll(resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusInternalServerError {
		s.mu.Lock()
		s.saw500 = append(s.saw500, method+" "+path)
		s.mu.Unlock()
	}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") && len(out.Body) > 0 {
		dec := json.NewDecoder(bytes.NewReader(out.Body))
		dec.UseNumber()
		if err := dec.Decode(&out.JSON); err != nil {
			return nil, fmt.Errorf("status %d, undecodable JSON body %q: %v", resp.StatusCode, out.Body, err)
		}
	}
	return out, nil
}

// DoAsync is Do for use from goroutines other than the test's: it returns the error instead of
// failing the test.
func (s *Server) DoAsync(method, path, token string, body any) (*Response, error) {
	return s.do(method, path, token, body)
}

// Get returns the value at a path into the JSON body, like "error.code", "rounds[0].stats.fooled" or
// "example.model_wrong", and whether it is present. Numbers come back as json.Number.
func (r *Response) Get(path string) (any, bool) {
	return Lookup(r.JSON, path)
}

// String returns the value at path rendered as text ("" when absent; "null" for null).
func (r *Response) String(path string) string {
	v, ok := r.Get(path)
	if !ok {
		return ""
	}
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case json.Number:
		return x.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Int returns the number at path, failing t when it is absent or not an integer.
func (r *Response) Int(t testing.TB, path string) int64 {
	t.Helper()
	v, ok := r.Get(path)
	n, isNum := v.(json.Number)
	if !ok || !isNum {
		t.Fatalf("%s: want a number, have %v (present %v) in %s", path, v, ok, r.Body)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return i
}

// Lookup walks a decoded JSON value along a path of keys and [index] steps.
func Lookup(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	for _, part := range splitPath(path) {
		if strings.HasPrefix(part, "[") {
			i, err := strconv.Atoi(strings.Trim(part, "[]"))
			list, ok := v.([]any)
			if err != nil || !ok || i < 0 || i >= len(list) {
				return nil, false
			}
			v = list[i]
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

func splitPath(path string) []string {
	var parts []string
	for _, dotted := range strings.Split(path, ".") {
		for dotted != "" {
			i := strings.Index(dotted, "[")
			switch {
			case i < 0:
				parts, dotted = append(parts, dotted), ""
			case i > 0:
				parts, dotted = append(parts, dotted[:i]), dotted[i:]
			default:
				j := strings.Index(dotted, "]")
				if j < 0 {
					j = len(dotted) - 1
				}
				parts, dotted = append(parts, dotted[:j+1]), dotted[j+1:]
			}
		}
	}
	return parts
}

// Stats are a round's counters as GET /api/v1/tasks/{code}/rounds/{n} shows them.
type Stats struct {
	Collected, Fooled, VerifiedFooled, Rejected int64
	MER, VMER                                   float64
}

// RoundStats reads round n's stats through the API.
func (s *Server) RoundStats(t testing.TB, code string, n int) Stats {
	t.Helper()
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%s/rounds/%d", code, n), s.AdminToken, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET round %d of %s: %d %s", n, code, r.Status, r.Body)
	}
	var st Stats
	st.Collected = r.Int(t, "stats.collected")
	st.Fooled = r.Int(t, "stats.fooled")
	st.VerifiedFooled = r.Int(t, "stats.verified_fooled")
	st.Rejected = r.Int(t, "stats.rejected")
	st.MER = r.float(t, "stats.mer")
	st.VMER = r.float(t, "stats.vmer")
	return st
}

func (r *Response) float(t testing.TB, path string) float64 {
	t.Helper()
	v, ok := r.Get(path)
	n, isNum := v.(json.Number)
	if !ok || !isNum {
		t.Fatalf("%s: want a number, have %v in %s", path, v, r.Body)
	}
	f, err := n.Float64()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// WantStats checks round n's stats through the API against the expected counts (the rates are
// derived from them here, independently of the server), and that no counter drifted.
func (s *Server) WantStats(t testing.TB, code string, n int, collected, fooled, verifiedFooled, rejected int64) {
	t.Helper()
	want := Stats{Collected: collected, Fooled: fooled, VerifiedFooled: verifiedFooled, Rejected: rejected}
	if collected > 0 {
		want.MER = float64(fooled) / float64(collected)
		want.VMER = float64(verifiedFooled) / float64(collected)
	}
	got := s.RoundStats(t, code, n)
	if got.Collected != want.Collected || got.Fooled != want.Fooled || got.VerifiedFooled != want.VerifiedFooled ||
		got.Rejected != want.Rejected || !near(got.MER, want.MER) || !near(got.VMER, want.VMER) {
		t.Errorf("round %d of %s stats:\n have %+v\n want %+v", n, code, got, want)
	}
	s.NoDrift(t)
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// ModelHealth forwards to the server's resolver, so model pages show health in tests too.
func (r *Resolver) ModelHealth(modelID int64) (dynabench.ModelHealth, bool) {
	if h, ok := r.next.(interface {
		ModelHealth(int64) (dynabench.ModelHealth, bool)
	}); ok {
		return h.ModelHealth(modelID)
	}
	return dynabench.ModelHealth{}, false
}
