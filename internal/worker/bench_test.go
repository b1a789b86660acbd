package worker_test

// Evaluation throughput. Run:
//
//	DYNABENCH_TEST_POSTGRES_URL= go test -run '^$' -bench 'BenchmarkEval' -benchtime 3x ./internal/worker/
//
// Each benchmark reports examples/s through the whole evaluation path (lease, model calls, scoring,
// the result written with the lease finished), perturbed copies included. The Dynalab one also
// measures, in the same run, the model server's own capacity (the same batches sent straight to it
// at the same concurrency) and reports the ratio.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters"
	"github.com/dynabench-go/dynabench/internal/demo"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/service"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
	"github.com/dynabench-go/dynabench/internal/worker"
)

// benchDataset is n NLI examples built from the demo seed set, with fresh uids.
func benchDataset(b *testing.B, n int) []byte {
	tasks, err := demo.Tasks()
	if err != nil {
		b.Fatal(err)
	}
	var seed []map[string]any
	for _, t := range tasks {
		if t.Code == "nli" {
			for _, e := range t.Seed {
				row := map[string]any{"label": e.Label}
				for k, v := range e.Input {
					row[k] = v
				}
				seed = append(seed, row)
			}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range n {
		row := map[string]any{}
		for k, v := range seed[i%len(seed)] {
			row[k] = v
		}
		row["uid"] = fmt.Sprint(i)
		enc.Encode(row)
	}
	return buf.Bytes()
}

// drain runs the worker until no job is due and returns the inputs it sent to models.
func drain(b *testing.B, w *worker.Worker) int {
	var inputs atomic.Int64
	w.Progress = func(_ *service.Work, done, total int) {
		if done == total {
			inputs.Add(int64(total))
		}
	}
	for {
		did, err := w.RunOnce(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if !did {
			return int(inputs.Load())
		}
	}
}

func benchServer(b *testing.B, n int) (*servertest.Server, *servertest.User) {
	srv := servertest.Start(b, sqlstoretest.Engines()[0], servertest.NoWorkers)
	if r := srv.Do(b, "POST", "/api/v1/tasks/nli/datasets?name=bench", srv.AdminToken, servertest.Raw{ContentType: "application/x-ndjson", Body: benchDataset(b, n)}); r.Status != 201 {
		b.Fatalf("dataset: %d %s", r.Status, r.Body)
	}
	return srv, srv.User(b, "bencher")
}

// BenchmarkEvalBuiltin: the demo NLI built-in model, in-process, on 2,000 examples and their
// perturbed copies.
func BenchmarkEvalBuiltin(b *testing.B) {
	srv, _ := benchServer(b, 2000)
	w := &worker.Worker{Source: &worker.Local{Service: srv.Service, Name: "bench"}, Predictors: worker.LocalPredictors(srv.Service.Models),
		Log: slog.New(slog.DiscardHandler)}
	drain(b, w) // the models queued at upload (built-in and baseline), and the model's first load
	models, _ := srv.Service.TaskModels(context.Background(), service.System, "nli")
	var id int64
	for _, m := range models {
		if m.Name == "nli-builtin-r1" {
			id = m.ID
		}
	}
	total := 0
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := srv.Service.EvaluateModel(context.Background(), service.System, id); err != nil {
			b.Fatal(err)
		}
		total += drain(b, w)
	}
	b.ReportMetric(float64(total)/time.Since(start).Seconds(), "examples/s")
}

// BenchmarkEvalDynalab: a fast local model server over the Dynalab batch protocol. The worker's
// throughput through the whole path is compared with the server's capacity: the same inputs sent
// straight to it with the adapter, at the same batch size and concurrency. "in-process" is the
// server's own worker (the default deployment); "remote" is `dynabench worker`, which also ships
// every input and answer through the API.
func BenchmarkEvalDynalab(b *testing.B) {
	b.Run("in-process", func(b *testing.B) { benchDynalab(b, false) })
	b.Run("remote", func(b *testing.B) { benchDynalab(b, true) })
}

func benchDynalab(b *testing.B, viaAPI bool) {
	var calls atomic.Int64
	model := dynalabServer(b, &calls)
	srv, u := benchServer(b, 2000)
	r := srv.Do(b, "POST", "/api/v1/tasks/nli/models", u.Token, map[string]any{"name": "fast", "kind": "dynalab", "url": model.URL})
	if r.Status != 201 {
		b.Fatalf("register: %d %s", r.Status, r.Body)
	}
	var id int64
	fmt.Sscan(r.String("id"), &id)
	remote := &worker.Remote{Server: srv.URL, Token: u.Token, Name: "bench"}
	reg := adapters.DefaultRegistry(adapters.Options{})
	w := &worker.Worker{Source: remote, Predictors: worker.RemotePredictors(remote, reg), Log: slog.New(slog.DiscardHandler)}
	if !viaAPI {
		w = &worker.Worker{Source: &worker.Local{Service: srv.Service, Name: "bench"}, Predictors: worker.LocalPredictors(srv.Service.Models),
			Log: slog.New(slog.DiscardHandler)}
	}
	drain(b, w)

	// The capacity baseline: every input of one evaluation, sent by the same adapter.
	ctx := context.Background()
	var inputs []map[string]any
	for _, v := range []string{dynabench.VariantOriginal, dynabench.VariantRobustness, dynabench.VariantFairness} {
		d, _ := srv.Service.Store.FindDatasetByName(ctx, srv.Task(b, "nli").ID, "bench")
		exs, _ := srv.Service.Store.FindDatasetExamples(ctx, d.ID, v)
		for _, e := range exs {
			inputs = append(inputs, e.Input)
		}
	}
	m, _ := srv.Service.Store.FindModelByID(ctx, id)
	p, err := worker.RemotePredictors(remote, reg)(ctx, &service.Work{Task: "nli", Model: m})
	if err != nil {
		b.Fatal(err)
	}
	var direct, path time.Duration
	total := 0
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		for lo := 0; lo < len(inputs); lo += 512 {
			if _, err := p.PredictBatch(ctx, inputs[lo:min(lo+512, len(inputs))]); err != nil {
				b.Fatal(err)
			}
		}
		direct += time.Since(t0)
		if r := srv.Do(b, "POST", fmt.Sprintf("/api/v1/models/%d/evaluate", id), u.Token, nil); r.Status != 202 {
			b.Fatalf("evaluate: %d", r.Status)
		}
		t1 := time.Now()
		total += drain(b, w)
		path += time.Since(t1)
	}
	capacity := float64(b.N*len(inputs)) / direct.Seconds()
	through := float64(total) / path.Seconds()
	b.ReportMetric(capacity, "server-examples/s")
	b.ReportMetric(through, "examples/s")
	b.ReportMetric(through/capacity, "ratio")
}
