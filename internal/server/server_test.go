package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

func forEachEngine(t *testing.T, fn func(t *testing.T, engine string)) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, engine)
		})
	}
}

// TestBootstrapAndOperations: a first start creates the admin and the four demo tasks, each ready
// for annotators; the operational endpoints answer.
func TestBootstrapAndOperations(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		s := servertest.Start(t, engine)
		for _, path := range []string{"/healthz", "/readyz"} {
			r := s.Do(t, http.MethodGet, path, "", nil)
			if r.Status != http.StatusOK || r.String("version") != "test" || r.String("status") == "" {
				t.Errorf("%s: %d %s", path, r.Status, r.Body)
			}
		}
		r := s.Do(t, http.MethodPost, "/api/v1/auth/login", "", map[string]any{"username": "admin", "password": servertest.AdminPassword})
		if r.Status != http.StatusOK {
			t.Fatalf("admin login: %d %s", r.Status, r.Body)
		}
		admin := r.String("token")
		r = s.Do(t, http.MethodGet, "/api/v1/tasks", "", nil)
		codes := []string{"sentiment", "nli", "qa", "hs"}
		for i, code := range codes {
			if got := r.String("tasks[" + string(rune('0'+i)) + "].code"); got != code {
				t.Errorf("task %d is %q, want %q", i, got, code)
			}
		}
		if _, ok := r.Get("tasks[4]"); ok {
			t.Errorf("more than four demo tasks: %s", r.Body)
		}
		for _, code := range codes {
			r := s.Do(t, http.MethodGet, "/api/v1/tasks/"+code+"/rounds/1", "", nil)
			if r.Status != http.StatusOK || r.String("status") != "open" || r.String("models") == "[]" {
				t.Errorf("%s round 1: %d %s", code, r.Status, r.Body)
			}
			r = s.Do(t, http.MethodGet, "/api/v1/tasks/"+code+"/context", admin, nil)
			if r.Status != http.StatusOK || r.String("id") == "" || r.String("round") != "1" {
				t.Errorf("%s context: %d %s", code, r.Status, r.Body)
			}
		}
		r = s.Do(t, http.MethodGet, "/metrics", "", nil)
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `dynabench_http_requests_total{route="GET /api/v1/tasks/{code}/context",status="200"} 4`) {
			t.Errorf("metrics: %d\n%s", r.Status, r.Body)
		}
	})
}

// TestRestart: a second start on the same database changes nothing: the admin keeps the first
// password and no demo task is created twice.
func TestRestart(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		url := sqlstoretest.URL(t, engine)
		log := slog.New(slog.DiscardHandler)
		cfg := server.Config{DatabaseURL: url, Demo: true, InsecureFastHashing: true, AdminPassword: "first-password"}
		m, err := server.Open(ctx, cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		cfg.AdminPassword = "second-password"
		m, err = server.Open(ctx, cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if n, err := m.Service.Store.CountUsers(ctx); err != nil || n != 1 {
			t.Errorf("%d users (%v)", n, err)
		}
		if tasks, err := m.Service.Store.FindTasks(ctx); err != nil || len(tasks) != 4 {
			t.Errorf("%d tasks (%v)", len(tasks), err)
		}
		if _, _, err := m.Service.Login(ctx, "admin", "first-password"); err != nil {
			t.Errorf("the first password no longer works: %v", err)
		}
		if _, _, err := m.Service.Login(ctx, "admin", "second-password"); err == nil {
			t.Errorf("a restart changed the admin password")
		}
	})
}

// TestGeneratedAdminPassword: without a configured password one is generated and logged once.
func TestGeneratedAdminPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	m, err := server.Open(ctx, server.Config{DatabaseURL: sqlstoretest.URL(t, sqlstoretest.Engines()[0]), InsecureFastHashing: true}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	match := regexp.MustCompile(`password=(\S+)`).FindStringSubmatch(buf.String())
	if match == nil {
		t.Fatalf("no password in the log:\n%s", buf.String())
	}
	if len(match[1]) < 12 {
		t.Errorf("generated password %q is short", match[1])
	}
	if _, _, err := m.Service.Login(ctx, "admin", match[1]); err != nil {
		t.Errorf("the logged password does not work: %v", err)
	}
	if tasks, _ := m.Service.Store.FindTasks(ctx); len(tasks) != 0 {
		t.Errorf("demo tasks without Demo: %d", len(tasks))
	}
}

// TestBuiltinModelInTheLoop: the demo tasks' built-in models answer real examples.
func TestBuiltinModelInTheLoop(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, sqlstoretest.Engines()[0])
	alice := s.User(t, "alice")
	for _, tc := range []struct{ code, field, value, label string }{
		{"sentiment", "statement", "I absolutely loved every minute of it.", "positive"},
		{"hs", "statement", "Have a nice day, neighbour.", "not-hateful"},
	} {
		c := s.Do(t, http.MethodGet, "/api/v1/tasks/"+tc.code+"/context", alice.Token, nil)
		r := s.Do(t, http.MethodPost, "/api/v1/tasks/"+tc.code+"/examples", alice.Token, map[string]any{"context_id": c.String("id"),
			"input": map[string]any{tc.field: tc.value, "label": tc.label}})
		if r.Status != http.StatusCreated {
			t.Fatalf("%s: %d %s", tc.code, r.Status, r.Body)
		}
		if w := r.String("example.model_wrong"); (w != "true" && w != "false") || r.String("example.model_error") != "" ||
			r.String("example.model_output.label") == "" {
			t.Errorf("%s: the built-in model did not answer: %s", tc.code, r.Body)
		}
		// exact_match on the label: fooled exactly when the model's label is not the annotator's.
		fooled := int64(0)
		if r.String("example.model_output.label") != tc.label {
			fooled = 1
		}
		if want := fmt.Sprint(fooled == 1); r.String("example.model_wrong") != want {
			t.Errorf("%s: model said %s to %s, model_wrong %s", tc.code, r.String("example.model_output.label"), tc.label, r.String("example.model_wrong"))
		}
		s.WantStats(t, tc.code, 1, 1, fooled, 0, 0)
	}
}

// TestGracefulShutdown: a request in flight when the server is told to stop still gets its answer,
// and the example it carried is stored.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, sqlstoretest.Engines()[0])
	ctx := context.Background()
	alice := s.User(t, "alice")
	release := make(chan struct{})
	started := make(chan struct{})
	slow := &servertest.Fake{Answer: func(ctx context.Context, _ map[string]any) (map[string]any, error) {
		close(started)
		select {
		case <-release:
			return map[string]any{"label": "positive"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	id := s.AddModel(t, "sentiment", "slow", slow)
	task := s.Task(t, "sentiment")
	if _, err := s.Service.SetRoundModels(ctx, mustAdmin(t, s), "sentiment", 1, []int64{id}, ""); err != nil {
		t.Fatal(err)
	}
	c := s.Do(t, http.MethodGet, "/api/v1/tasks/sentiment/context", alice.Token, nil)
	var wg sync.WaitGroup
	var res *servertest.Response
	var reqErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, reqErr = s.DoAsync(http.MethodPost, "/api/v1/tasks/sentiment/examples", alice.Token, map[string]any{
			"context_id": c.String("id"), "input": map[string]any{"statement": "In flight.", "label": "negative"}})
	}()
	<-started
	done := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		done <- s.HTTP.Shutdown(sctx)
	}()
	// Once the server refuses new requests, shutdown has begun; the request is still in the model call.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := s.DoAsync(http.MethodGet, "/healthz", "", nil); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server kept taking requests after Shutdown")
		}
	}
	close(release)
	wg.Wait()
	if reqErr != nil || res.Status != http.StatusCreated || res.String("example.model_wrong") != "true" {
		t.Fatalf("in-flight request: %v %+v", reqErr, res)
	}
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	r, err := s.Service.Store.FindRound(ctx, task.ID, 1)
	if err != nil || r.Stats.Collected != 1 || r.Stats.Fooled != 1 {
		t.Errorf("round after shutdown: %+v %v", r, err)
	}
	if _, err := s.DoAsync(http.MethodGet, "/healthz", "", nil); err == nil {
		t.Errorf("the server still answers after shutdown")
	}
}

func mustAdmin(t *testing.T, s *servertest.Server) *dynabench.User {
	t.Helper()
	u, err := s.Service.Store.FindUserByUsername(context.Background(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestReadinessWithoutDatabase: /readyz says 503 once the database is gone; /healthz still 200.
func TestReadinessWithoutDatabase(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, sqlstoretest.Engines()[0])
	s.DB.Close()
	r := s.Do(t, http.MethodGet, "/readyz", "", nil)
	if r.Status != http.StatusServiceUnavailable || r.String("error.code") != "unavailable" {
		t.Errorf("readyz: %d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "sql") {
		t.Errorf("readyz leaks the database error: %s", r.Body)
	}
	r = s.Do(t, http.MethodGet, "/healthz", "", nil)
	if r.Status != http.StatusOK {
		t.Errorf("healthz: %d", r.Status)
	}
}
