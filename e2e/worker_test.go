package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWorkerKilledMidJob: a `dynabench worker` process is SIGKILLed while it is calling a model for
// a job. Its lease expires (2 s here); a second worker process is handed the job and finishes it;
// every evaluation ends completed with exactly one result, and the job's log shows the hand-over.
func TestWorkerKilledMidJob(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	srv := startServerWith(t, bin, filepath.Join(dir, "dynabench.db"), dir, 0, []string{"--workers", "0", "--job-lease", "2s"}, nil)

	// A slow model server: each batch takes 150 ms, so a job of a few hundred inputs in batches of 8
	// is in progress long enough to be killed.
	var calls atomic.Int64
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Samples []json.RawMessage `json:"dataset_samples"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		calls.Add(1)
		time.Sleep(150 * time.Millisecond)
		out := make([]map[string]any, len(req.Samples))
		for i := range out {
			out[i] = map[string]any{"label": "negative", "prob": map[string]any{"positive": 0.1, "negative": 0.8, "neutral": 0.1}}
		}
		json.NewEncoder(w).Encode(out)
	}))
	defer model.Close()

	hc := newHTTPClient()
	defer hc.CloseIdleConnections()
	anon := &apiClient{base: srv.base, hc: hc}
	var auth struct {
		Token string `json:"token"`
	}
	anon.mustDo(t, http.MethodPost, "/api/v1/auth/login", map[string]any{"username": "admin", "password": adminPassword}, &auth, 200)
	admin := &apiClient{base: srv.base, token: auth.Token, hc: hc}
	var m struct {
		ID string `json:"id"`
	}
	admin.mustDo(t, http.MethodPost, "/api/v1/tasks/sentiment/models", map[string]any{"name": "slow", "kind": "dynalab", "url": model.URL}, &m, 201)

	startWorker := func(name string) *exec.Cmd {
		logf, err := os.Create(filepath.Join(dir, "worker-"+name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "worker", "--server", srv.base, "--token", auth.Token, "--name", name, "--batch-size", "8", "--log-format", "json")
		cmd.Env = childEnv()
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = childAttr()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); logf.Close() })
		return cmd
	}
	doomed := startWorker("doomed")
	deadline := time.Now().Add(60 * time.Second)
	for calls.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatal("the first worker never called the model")
		}
		time.Sleep(10 * time.Millisecond)
	}
	doomed.Process.Kill() // SIGKILL mid-job
	doomed.Wait()
	killedAt := time.Now()
	startWorker("survivor")

	type part struct {
		Variant string  `json:"variant"`
		Status  string  `json:"status"`
		Log     *string `json:"log"`
	}
	var view struct {
		Evaluations []struct {
			Dataset string `json:"dataset"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Parts   []part `json:"parts"`
		} `json:"evaluations"`
	}
	for {
		admin.mustDo(t, http.MethodGet, "/api/v1/models/"+m.ID, nil, &view, 200)
		done := len(view.Evaluations) > 0
		for _, e := range view.Evaluations {
			done = done && e.Status == "completed"
			if e.Status == "failed" {
				t.Fatalf("evaluation on %s failed: %s", e.Dataset, e.Reason)
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(view)
			t.Fatalf("not completed within the deadline: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	handedOver := 0
	for _, e := range view.Evaluations {
		for _, p := range e.Parts {
			log := *p.Log
			if n := strings.Count(log, "completed:"); n != 1 {
				t.Fatalf("%s %q: %d results in its log:\n%s", e.Dataset, p.Variant, n, log)
			}
			if strings.Contains(log, "leased by doomed") {
				if !strings.Contains(log, "attempt 2 of 3") || !strings.Contains(log, "survivor") {
					t.Fatalf("%s %q: the killed worker's job was not handed over:\n%s", e.Dataset, p.Variant, log)
				}
				handedOver++
			}
		}
	}
	if handedOver == 0 {
		t.Fatal("no job was in the killed worker's hands")
	}
	t.Logf("%d model calls; %d job(s) handed over; all completed %s after the kill", calls.Load(), handedOver,
		time.Since(killedAt).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "doctor", "--database-url", filepath.Join(dir, "dynabench.db")).CombinedOutput()
	if err != nil {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
}
