package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
	"github.com/dynabench-go/dynabench/internal/worker"
)

const config = `
context:
- name: context
  type: string
input:
- name: statement
  type: string
- name: label
  type: multiclass
  labels: [positive, negative, neutral]
output:
- name: label
model_wrong_metric:
  type: exact_match
  reference_names: [label]
perf_metric:
  type: accuracy
  reference_name: label
delta_metrics:
- type: robustness
- type: fairness
aggregation_metric:
  type: dynascore
`

// dataset's statements start with their label; some carry names and gendered words, so that the
// fairness perturbations change them.
const dataset = `{"uid":"1","context":"c","statement":"positive: John said she loved it.","label":"positive"}
{"uid":"2","context":"c","statement":"negative: He hated the film, said Mary.","label":"negative"}
{"uid":"3","context":"c","statement":"neutral: The man walked home.","label":"neutral"}
`

// dynalabServer is a real model server speaking the Dynalab protocol: it answers the label a
// statement starts with, or "neutral".
func dynalabServer(t testing.TB, calls *atomic.Int64) *httptest.Server {
	answer := func(in map[string]any) map[string]any {
		s, _ := in["statement"].(string)
		label, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
		if label != "positive" && label != "negative" {
			label = "neutral"
		}
		return map[string]any{"label": label}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /model/batch_evaluation", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Samples []map[string]any `json:"dataset_samples"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		out := make([]map[string]any, len(req.Samples))
		for i, s := range req.Samples {
			out[i] = answer(s)
		}
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /model/single_evaluation", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		json.NewEncoder(w).Encode(answer(in))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestRemoteWorker: a model builder's worker on "another machine" leases their model's jobs over the
// API, calls the model where it runs, and reports; the server scores. It never sees jobs on hidden
// datasets, which stay with the platform's own workers.
func TestRemoteWorker(t *testing.T) {
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := servertest.Start(t, engine, servertest.NoDemo, servertest.NoWorkers)
			alice := srv.User(t, "alice")
			if r := srv.Do(t, "POST", "/api/v1/tasks", srv.AdminToken, map[string]any{"code": "t1", "name": "T1", "config": config}); r.Status != 201 {
				t.Fatalf("task: %d %s", r.Status, r.Body)
			}
			for _, d := range []string{"name=dev&access=scoring", "name=secret&access=hidden"} {
				if r := srv.Do(t, "POST", "/api/v1/tasks/t1/datasets?"+d, srv.AdminToken, servertest.Raw{ContentType: "application/x-ndjson", Body: []byte(dataset)}); r.Status != 201 {
					t.Fatalf("dataset: %d %s", r.Status, r.Body)
				}
			}
			var calls atomic.Int64
			model := dynalabServer(t, &calls)
			r := srv.Do(t, "POST", "/api/v1/tasks/t1/models", alice.Token, map[string]any{"name": "mine", "kind": "dynalab", "url": model.URL})
			if r.Status != 201 {
				t.Fatalf("register: %d %s", r.Status, r.Body)
			}
			var id int64
			fmt.Sscan(r.String("id"), &id)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			remote := &worker.Remote{Server: srv.URL, Token: alice.Token, Name: "alice-laptop"}
			w := &worker.Worker{Source: remote, Predictors: worker.RemotePredictors(remote, adapters.DefaultRegistry(adapters.Options{})),
				Log: slog.New(slog.DiscardHandler), BatchSize: 2}
			ran := 0
			for {
				did, err := w.RunOnce(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !did {
					break
				}
				ran++
			}
			evs, err := srv.Service.Store.FindEvaluations(ctx, dynabench.EvaluationFilter{ModelID: id})
			if err != nil {
				t.Fatal(err)
			}
			byDataset := map[int64][]*dynabench.Evaluation{}
			for _, e := range evs {
				byDataset[e.DatasetID] = append(byDataset[e.DatasetID], e)
			}
			dev, _ := srv.Service.Store.FindDatasetByName(ctx, srv.Task(t, "t1").ID, "dev")
			secret, _ := srv.Service.Store.FindDatasetByName(ctx, srv.Task(t, "t1").ID, "secret")
			if ran != len(byDataset[dev.ID]) || ran < 2 {
				t.Fatalf("the remote worker ran %d jobs; dev has %d parts", ran, len(byDataset[dev.ID]))
			}
			for _, e := range byDataset[dev.ID] {
				if e.Status != dynabench.EvalCompleted || !strings.Contains(e.Log, "alice-laptop") {
					t.Fatalf("dev %q: %s %s\n%s", e.Variant, e.Status, e.Reason, e.Log)
				}
				if e.Variant == "" && (e.Result.Metrics["accuracy"] != 100 || e.Result.ExamplesPerSecond <= 0 || e.Result.MemoryGiB != nil) {
					t.Fatalf("dev scores: %+v", e.Result)
				}
			}
			for _, e := range byDataset[secret.ID] {
				if e.Status != dynabench.EvalQueued {
					t.Fatalf("a hidden dataset's job reached a model builder's worker: %s %s", e.Variant, e.Status)
				}
			}
			if calls.Load() == 0 {
				t.Fatal("the model server was never called")
			}

			// The platform's own worker takes the hidden dataset.
			local := &worker.Worker{Source: &worker.Local{Service: srv.Service, Name: "platform"}, Predictors: worker.LocalPredictors(srv.Service.Models),
				Log: slog.New(slog.DiscardHandler)}
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				if did, err := local.RunOnce(ctx); err != nil || !did {
					break
				}
			}
			evs, _ = srv.Service.Store.FindEvaluations(ctx, dynabench.EvaluationFilter{DatasetID: secret.ID})
			for _, e := range evs {
				if e.Status != dynabench.EvalCompleted {
					t.Fatalf("hidden %q after the platform's worker: %s %s", e.Variant, e.Status, e.Reason)
				}
			}
		})
	}
}
