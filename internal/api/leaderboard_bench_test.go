package api_test

// Leaderboard speed on a realistic table: 100 published models × 10 scoring datasets of 500
// examples, each model completed on each dataset. Run:
//
//	DYNABENCH_TEST_POSTGRES_URL= go test -run '^$' -bench BenchmarkLeaderboardGET -benchtime 200x ./internal/api/
//
// "computed" changes the weights on every request (each one misses the cache: load, 1,000-resample
// paired bootstrap, JSON); "cached" repeats one weight set (the scores-version check and the JSON).
// Both report p50 and p99 latency of the whole HTTP GET.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

func leaderboardFixture(b *testing.B) *servertest.Server {
	srv := servertest.Start(b, sqlstoretest.Engines()[0], servertest.NoDemo, servertest.NoWorkers)
	if r := srv.Do(b, "POST", "/api/v1/tasks", srv.AdminToken, map[string]any{"code": "t1", "name": "T1", "config": sentimentConfig}); r.Status != 201 {
		b.Fatalf("task: %d %s", r.Status, r.Body)
	}
	ctx := context.Background()
	st := srv.Service.Store
	task := srv.Task(b, "t1")
	labels := []string{"positive", "negative", "neutral"}
	rng := rand.New(rand.NewPCG(1, 2))
	const nDatasets, nExamples, nModels = 10, 500, 100
	var ds []*dynabench.Dataset
	golds := make([][]string, nDatasets)
	for d := range nDatasets {
		exs := make([]*dynabench.DatasetExample, nExamples)
		for i := range exs {
			g := labels[rng.IntN(3)]
			golds[d] = append(golds[d], g)
			exs[i] = &dynabench.DatasetExample{Idx: i, UID: fmt.Sprint(i), Input: map[string]any{"statement": "s"}, Gold: []string{g}}
		}
		ds = append(ds, &dynabench.Dataset{TaskID: task.ID, Name: fmt.Sprintf("d%d", d), Access: dynabench.AccessScoring, SHA256: "x", Size: nExamples})
		if err := st.InTx(ctx, func(tx dynabench.Store) error { return tx.SaveDataset(ctx, ds[d], exs) }); err != nil {
			b.Fatal(err)
		}
	}
	for m := range nModels {
		model := &dynabench.Model{TaskID: task.ID, UserID: srv.AdminID, Name: fmt.Sprintf("m%03d", m), Kind: dynabench.KindDynalab, URL: "http://x.invalid", Published: true}
		if err := st.CreateModel(ctx, model); err != nil {
			b.Fatal(err)
		}
		skill := 0.4 + 0.5*float64(m)/nModels
		for d, dataset := range ds {
			preds := make([]string, nExamples)
			for i := range preds {
				if rng.Float64() < skill {
					preds[i] = golds[d][i]
				} else {
					preds[i] = labels[rng.IntN(3)]
				}
			}
			mem := 0.1 + rng.Float64()
			ev := &dynabench.Evaluation{ModelID: model.ID, DatasetID: dataset.ID, DatasetVersion: 1}
			if err := st.QueueEvaluation(ctx, ev); err != nil {
				b.Fatal(err)
			}
			ev.Status = dynabench.EvalCompleted
			ev.Result = &dynabench.EvalResult{N: nExamples, Predictions: preds, ExamplesPerSecond: 100 + 1000*rng.Float64(), MemoryGiB: &mem,
				Metrics: map[string]float64{}}
			if err := st.UpdateEvaluation(ctx, ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	return srv
}

func BenchmarkLeaderboardGET(b *testing.B) {
	srv := leaderboardFixture(b)
	client := &http.Client{Timeout: time.Minute}
	get := func(b *testing.B, query string) time.Duration {
		t0 := time.Now()
		resp, err := client.Get(srv.URL + "/api/v1/tasks/t1/leaderboard" + query)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(t0)
	}
	report := func(b *testing.B, lat []time.Duration) {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.Run("computed", func(b *testing.B) {
		var lat []time.Duration
		for i := range b.N {
			lat = append(lat, get(b, fmt.Sprintf("?metric_weights=macro_f1:%d,examples_per_second:1,memory_utilization:1", 5+i)))
		}
		report(b, lat)
	})
	b.Run("cached", func(b *testing.B) {
		get(b, "")
		var lat []time.Duration
		for range b.N {
			lat = append(lat, get(b, ""))
		}
		report(b, lat)
	})
}
