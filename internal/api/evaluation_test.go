package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
	"github.com/dynabench-go/dynabench/internal/worker"
)

// evalDataset is four examples whose statements name their gold label, so that a model reading
// the statement can be right on all of them.
const evalDataset = `{"uid":"1","context":"c","statement":"positive: Fine work.","label":"positive","tags":["short"]}
{"uid":"2","context":"c","statement":"positive: She loved it.","label":"positive"}
{"uid":"3","context":"c","statement":"negative: He hated it.","label":"negative","tags":["short"]}
{"uid":"4","context":"c","statement":"neutral: It rained.","label":"neutral"}
`

func ndjson(s string) servertest.Raw {
	return servertest.Raw{ContentType: "application/x-ndjson", Body: []byte(s)}
}

// reader answers the label its statement starts with.
func reader() *servertest.Fake {
	return &servertest.Fake{Answer: func(_ context.Context, in map[string]any) (map[string]any, error) {
		s, _ := in["statement"].(string)
		label, _, _ := strings.Cut(strings.ToLower(s), ":")
		if label != "positive" && label != "negative" && label != "neutral" {
			label = "neutral"
		}
		return map[string]any{"label": label}, nil
	}}
}

type modelView struct {
	Published   bool `json:"published"`
	Evaluations []struct {
		Dataset string                        `json:"dataset"`
		Version int                           `json:"version"`
		Status  string                        `json:"status"`
		Reason  string                        `json:"reason"`
		Fault   string                        `json:"fault"`
		Scores  map[string]float64            `json:"scores"`
		ByTag   map[string]map[string]float64 `json:"by_tag"`
		Parts   []struct {
			Variant string  `json:"variant"`
			Status  string  `json:"status"`
			Log     *string `json:"log"`
		} `json:"parts"`
	} `json:"evaluations"`
}

// waitModel polls a model until every evaluation is completed or failed.
func waitModel(t *testing.T, srv *servertest.Server, id int64, token string) modelView {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := srv.Do(t, "GET", fmt.Sprintf("/api/v1/models/%d", id), token, nil)
		if r.Status != 200 {
			t.Fatalf("GET model %d: %d %s", id, r.Status, r.Body)
		}
		var m modelView
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatal(err)
		}
		done := len(m.Evaluations) > 0
		for _, e := range m.Evaluations {
			done = done && (e.Status == "completed" || e.Status == "failed")
		}
		if done {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("model %d still evaluating: %s", id, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type boardView struct {
	Metrics []struct {
		Name   string  `json:"name"`
		Weight float64 `json:"weight"`
	} `json:"metrics"`
	Datasets []struct {
		Name   string  `json:"name"`
		Weight float64 `json:"weight"`
	} `json:"datasets"`
	Rows []struct {
		Model struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"model"`
		Dynascore   float64    `json:"dynascore"`
		DynascoreCI [2]float64 `json:"dynascore_ci"`
		Rank        int        `json:"rank"`
		Metrics     map[string]struct {
			Value float64    `json:"value"`
			CI    [2]float64 `json:"ci"`
		} `json:"metrics"`
	} `json:"rows"`
	Pending         []struct{ Reason string } `json:"pending"`
	ExcludedMetrics []struct {
		Name   string `json:"name"`
		Reason string `json:"reason"`
	} `json:"excluded_metrics"`
	ScoresVersion string `json:"scores_version"`
	ComputedAt    string `json:"computed_at"`
}

func getBoard(t *testing.T, srv *servertest.Server, query string) boardView {
	t.Helper()
	r := srv.Do(t, "GET", "/api/v1/tasks/t1/leaderboard"+query, "", nil)
	if r.Status != 200 {
		t.Fatalf("leaderboard%s: %d %s", query, r.Status, r.Body)
	}
	var b boardView
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestEvaluationLoop: a dataset upload, two models evaluated by the in-process worker, scores
// worked out by hand, the leaderboard with intervals and reader weights, forks, snapshots, a paired
// comparison, caching, and a new dataset version re-scoring both models.
func TestEvaluationLoop(t *testing.T) {
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := servertest.Start(t, engine, servertest.NoDemo)
			owner := srv.User(t, "owner")
			if r := srv.Do(t, "POST", "/api/v1/tasks", srv.AdminToken, map[string]any{"code": "t1", "name": "T1", "config": sentimentConfig}); r.Status != 201 {
				t.Fatalf("create task: %d %s", r.Status, r.Body)
			}
			if err := srv.Service.Store.AddTaskOwner(context.Background(), srv.Task(t, "t1").ID, owner.ID); err != nil {
				t.Fatal(err)
			}
			always := srv.AddModel(t, "t1", "always-positive", servertest.Says("positive"))
			reads := srv.AddModel(t, "t1", "reader", reader())

			// Bad datasets are refused whole, naming the line and the field.
			for _, bad := range []struct{ body, field, msg string }{
				{`{"uid":"1","context":"c","statement":"s","label":"happy"}`, "line 1", "label"},
				{evalDataset + `{"uid":"1","context":"c","statement":"s","label":"positive"}`, "line 5", "repeats line 1"},
				{`{"context":"c","statement":"s","label":"positive"}`, "line 1", "uid"},
				{`{"uid":"9","context":"c","statment":"s","label":"positive"}`, "line 1", "statment"},
				{`not json`, "line 1", "JSON"},
			} {
				r := srv.Do(t, "POST", "/api/v1/tasks/t1/datasets?name=dev", owner.Token, ndjson(bad.body))
				if r.Status != 422 || r.String("error.field") != bad.field || !strings.Contains(r.String("error.message"), bad.msg) {
					t.Errorf("bad dataset %q: %d %s", bad.body, r.Status, r.Body)
				}
			}
			if r := srv.Do(t, "GET", "/api/v1/tasks/t1/datasets", "", nil); !strings.Contains(string(r.Body), `"datasets":[]`) {
				t.Fatalf("a refused upload stored something: %s", r.Body)
			}

			r := srv.Do(t, "POST", "/api/v1/tasks/t1/datasets?name=dev", owner.Token, ndjson(evalDataset))
			if r.Status != 201 || r.String("version") != "1" || r.String("size") != "4" {
				t.Fatalf("upload: %d %s", r.Status, r.Body)
			}
			// Models registered before the dataset: the dataset queued them (AddModel bypasses the API).
			for _, id := range []int64{always, reads} {
				if r := srv.Do(t, "POST", fmt.Sprintf("/api/v1/models/%d/evaluate", id), srv.AdminToken, nil); r.Status != 202 {
					t.Fatalf("evaluate: %d %s", r.Status, r.Body)
				}
			}
			a := waitModel(t, srv, always, srv.AdminToken)
			b := waitModel(t, srv, reads, srv.AdminToken)
			// By hand: always "positive" on gold (pos, pos, neg, neu): accuracy 2/4 = 50%.
			// F1: positive P=2/4 R=2/2 → 2/3; negative 0; neutral 0 → macro-F1 = 2/9 = 22.22%.
			// Tag "short" = examples 1 and 3: accuracy 1/2.
			ea := a.Evaluations[0]
			if ea.Status != "completed" || !near(ea.Scores["accuracy"], 50) || !near(ea.Scores["macro_f1"], 200.0/9) {
				t.Fatalf("always-positive scores: %+v", ea)
			}
			if !near(ea.ByTag["short"]["accuracy"], 50) || ea.Scores["examples_per_second"] <= 0 {
				t.Fatalf("always-positive per tag / throughput: %+v", ea)
			}
			if _, ok := ea.Scores["memory_gib"]; ok {
				t.Fatalf("memory of a model served over HTTP must not be invented: %+v", ea.Scores)
			}
			if eb := b.Evaluations[0]; !near(eb.Scores["accuracy"], 100) || !near(eb.Scores["macro_f1"], 100) {
				t.Fatalf("reader scores: %+v", eb)
			}
			if ea.Parts[0].Log == nil || !strings.Contains(*ea.Parts[0].Log, "completed: 4 examples") {
				t.Fatalf("the owner sees the evaluation's log: %+v", ea.Parts[0])
			}

			// Unpublished models are not on the leaderboard.
			if board := getBoard(t, srv, ""); len(board.Rows) != 0 {
				t.Fatalf("unpublished models ranked: %+v", board.Rows)
			}
			for _, id := range []int64{always, reads} {
				if r := srv.Do(t, "POST", fmt.Sprintf("/api/v1/models/%d/publish", id), srv.AdminToken, nil); r.Status != 200 {
					t.Fatalf("publish: %d %s", r.Status, r.Body)
				}
			}
			board := getBoard(t, srv, "")
			if len(board.Rows) != 2 || board.Rows[0].Model.Name != "reader" || board.Rows[0].Rank != 1 {
				t.Fatalf("leaderboard: %+v", board)
			}
			for _, row := range board.Rows {
				if !(row.DynascoreCI[0] <= row.Dynascore+1e-9 && row.Dynascore <= row.DynascoreCI[1]+1e-9) {
					t.Errorf("%s: dynascore %v outside its interval %v", row.Model.Name, row.Dynascore, row.DynascoreCI)
				}
			}
			if !near(board.Rows[1].Metrics["macro_f1"].Value, 200.0/9) || board.Metrics[0].Name != "macro_f1" || board.Metrics[0].Weight != 4 {
				t.Fatalf("leaderboard metrics: %+v", board)
			}
			if len(board.ExcludedMetrics) != 1 || board.ExcludedMetrics[0].Name != "memory_utilization" {
				t.Fatalf("memory must be left out, and said so: %+v", board.ExcludedMetrics)
			}
			// A reader who weighs only the perf metric gets it back as the Dynascore (weights
			// normalise to 1, AMRS of the perf metric is 1).
			perfOnly := getBoard(t, srv, "?metric_weights=macro_f1:1,examples_per_second:0")
			if !near(perfOnly.Rows[0].Dynascore, 100) || !near(perfOnly.Rows[1].Dynascore, 200.0/9) {
				t.Fatalf("perf-only Dynascores: %+v", perfOnly.Rows)
			}
			// A cached leaderboard is the same object until a score changes.
			if again := getBoard(t, srv, ""); again.ComputedAt != board.ComputedAt {
				t.Fatalf("the second read was recomputed: %s vs %s", again.ComputedAt, board.ComputedAt)
			}
			for _, bad := range []string{"?metric_weights=speed:1", "?metric_weights=macro_f1:-1", "?dataset_weights=nope:1", "?metric_weights=macro_f1:0,examples_per_second:0"} {
				if r := srv.Do(t, "GET", "/api/v1/tasks/t1/leaderboard"+bad, "", nil); r.Status != 422 {
					t.Errorf("leaderboard%s: %d %s", bad, r.Status, r.Body)
				}
			}

			// Forks keep weights under a URL; snapshots keep standings.
			r = srv.Do(t, "POST", "/api/v1/tasks/t1/leaderboard/forks", owner.Token, map[string]any{"name": "perf only", "metric_weights": map[string]any{"macro_f1": 1, "examples_per_second": 0}})
			if r.Status != 201 {
				t.Fatalf("fork: %d %s", r.Status, r.Body)
			}
			fr := srv.Do(t, "GET", r.String("url"), "", nil)
			if fr.Status != 200 || fr.String("fork.name") != "perf only" || !strings.Contains(string(fr.Body), `"dynascore":100`) {
				t.Fatalf("fork board: %d %s", fr.Status, fr.Body)
			}
			r = srv.Do(t, "POST", "/api/v1/tasks/t1/leaderboard/snapshots", owner.Token, map[string]any{"name": "before v2"})
			if r.Status != 201 {
				t.Fatalf("snapshot: %d %s", r.Status, r.Body)
			}
			snapURL := r.String("url")

			// Paired comparison on the same examples: accuracy 50 vs 100; McNemar counts 0 and 2.
			r = srv.Do(t, "GET", fmt.Sprintf("/api/v1/compare?a=%d&b=%d", always, reads), "", nil)
			if r.Status != 200 || r.String("datasets[0].diff") != "-50" || r.String("datasets[0].only_b_correct") != "2" || r.String("datasets[0].only_a_correct") != "0" {
				t.Fatalf("compare: %d %s", r.Status, r.Body)
			}

			// A new version re-scores both models, and the leaderboard follows.
			r = srv.Do(t, "POST", "/api/v1/tasks/t1/datasets?name=dev", owner.Token, ndjson(strings.SplitAfter(evalDataset, "\n")[2]))
			if r.Status != 201 || r.String("version") != "2" {
				t.Fatalf("new version: %d %s", r.Status, r.Body)
			}
			a = waitModel(t, srv, always, srv.AdminToken)
			if ea := a.Evaluations[0]; ea.Version != 2 || !near(ea.Scores["accuracy"], 0) {
				t.Fatalf("after v2 (one negative example), always-positive: %+v", ea)
			}
			waitModel(t, srv, reads, srv.AdminToken)
			if v2 := getBoard(t, srv, ""); v2.ScoresVersion == board.ScoresVersion || !near(v2.Rows[1].Metrics["macro_f1"].Value, 0) {
				t.Fatalf("leaderboard after v2: %+v", v2)
			}
			// The snapshot did not move.
			if sr := srv.Do(t, "GET", snapURL, "", nil); sr.Status != 200 || sr.String("leaderboard.scores_version") != board.ScoresVersion {
				t.Fatalf("snapshot changed: %s", sr.Body)
			}
			srv.NoDrift(t)
		})
	}
}

// TestEvaluationFaults: a worker that dies mid-job loses its lease to another worker, whose result
// is the only one stored; a model that times out is retried with backoff and then parked with the
// reason; one that answers garbage is parked at once. Both are the model's fault and count against
// the daily quota; a failure of the platform does not.
func TestEvaluationFaults(t *testing.T) {
	srv := servertest.Start(t, enginesFirst(), servertest.NoDemo, servertest.NoWorkers)
	srv.Service.RetryBackoff = 10 * time.Millisecond
	srv.Service.JobLease = 300 * time.Millisecond
	owner, alice := srv.User(t, "owner"), srv.User(t, "alice")
	if r := srv.Do(t, "POST", "/api/v1/tasks", srv.AdminToken, map[string]any{"code": "t1", "name": "T1", "config": sentimentConfig}); r.Status != 201 {
		t.Fatalf("create task: %d %s", r.Status, r.Body)
	}
	task := srv.Task(t, "t1")
	ctx := context.Background()
	if err := srv.Service.Store.AddTaskOwner(ctx, task.ID, owner.ID); err != nil {
		t.Fatal(err)
	}
	if r := srv.Do(t, "POST", "/api/v1/tasks/t1/datasets?name=dev&access=standard", owner.Token, ndjson(evalDataset)); r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	lease := func(token, worker string) map[string]any {
		t.Helper()
		r := srv.Do(t, "POST", "/api/v1/jobs/lease", token, map[string]any{"worker": worker})
		if r.Status != 200 {
			t.Fatalf("lease as %s: %d %s", worker, r.Status, r.Body)
		}
		var w map[string]any
		json.Unmarshal(r.Body, &w)
		return w
	}

	// A worker leases the job of a model and dies; the lease expires; another worker takes it over
	// and completes it; the dead worker's late report is refused.
	m := srv.AddModel(t, "t1", "slowpoke", servertest.Says("positive"))
	if r := srv.Do(t, "POST", fmt.Sprintf("/api/v1/models/%d/evaluate", m), srv.AdminToken, nil); r.Status != 202 {
		t.Fatalf("evaluate: %d %s", r.Status, r.Body)
	}
	dead := lease(srv.AdminToken, "doomed")
	job := fmt.Sprint(dead["job_id"])
	time.Sleep(400 * time.Millisecond) // past the lease
	alive := lease(srv.AdminToken, "survivor")
	if fmt.Sprint(alive["job_id"]) != job || alive["attempt"] != json.Number("2") && fmt.Sprint(alive["attempt"]) != "2" {
		t.Fatalf("the expired job was not handed over: %v", alive)
	}
	outputs := make([]map[string]any, len(alive["inputs"].([]any)))
	for i := range outputs {
		outputs[i] = map[string]any{"label": "positive"}
	}
	report := map[string]any{"dataset_version": 1, "outputs": outputs, "examples_per_second": 10}
	if r := srv.Do(t, "POST", "/api/v1/jobs/"+job+"/complete", srv.AdminToken, map[string]any{"lease": dead["lease"], "report": report}); r.Status != 409 {
		t.Fatalf("the dead worker's report: %d %s", r.Status, r.Body)
	}
	if r := srv.Do(t, "POST", "/api/v1/jobs/"+job+"/complete", srv.AdminToken, map[string]any{"lease": alive["lease"], "report": report}); r.Status != 200 {
		t.Fatalf("the survivor's report: %d %s", r.Status, r.Body)
	}
	if r := srv.Do(t, "POST", "/api/v1/jobs/"+job+"/complete", srv.AdminToken, map[string]any{"lease": alive["lease"], "report": report}); r.Status != 409 {
		t.Fatalf("a second report of a finished job: %d %s", r.Status, r.Body)
	}
	evs, err := srv.Service.Store.FindEvaluations(ctx, dynabench.EvaluationFilter{ModelID: m})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].Status != "completed" || !strings.Contains(evs[0].Log, "survivor") || strings.Count(evs[0].Log, "completed:") != 1 {
		t.Fatalf("one result, from the survivor: %+v", evs[0])
	}

	// Alice's quota is one submission a day. Her models run on workers in this process.
	st := task.Settings
	st.MaxSubmissionsPerDay = 1
	if r := srv.Do(t, "PUT", "/api/v1/tasks/t1/settings", owner.Token, st); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	register := func(name string) (int, int64) {
		r := srv.Do(t, "POST", "/api/v1/tasks/t1/models", alice.Token, map[string]any{"name": name, "kind": "dynalab", "url": "http://fake.invalid"})
		var mid int64
		fmt.Sscan(r.String("id"), &mid)
		return r.Status, mid
	}
	status, timesOut := register("times-out")
	if status != 201 {
		t.Fatalf("first submission: %d", status)
	}
	srv.Models.Set(timesOut, servertest.Fails(&dynabench.ModelError{Kind: dynabench.ModelTimeout, Err: context.DeadlineExceeded}))
	runWorker(t, srv)
	v := waitModel(t, srv, timesOut, alice.Token)
	if e := v.Evaluations[0]; e.Status != "failed" || e.Fault != "model" || !strings.Contains(e.Reason, "timeout") {
		t.Fatalf("a model that times out: %+v", e)
	}
	if e := v.Evaluations[0]; e.Parts[0].Log == nil || strings.Count(*e.Parts[0].Log, "retrying") != 2 {
		t.Fatalf("retried twice with backoff, then parked: %+v", *e.Parts[0].Log)
	}
	if status, _ := register("second"); status != 429 {
		t.Fatalf("a second submission past the quota (the model, not the platform, failed): %d", status)
	}

	// A platform failure refunds the submission.
	evs, _ = srv.Service.Store.FindEvaluations(ctx, dynabench.EvaluationFilter{ModelID: timesOut})
	evs[0].Status, evs[0].Fault = dynabench.EvalFailed, dynabench.FaultPlatform
	if err := srv.Service.Store.UpdateEvaluation(ctx, evs[0]); err != nil {
		t.Fatal(err)
	}
	status, garbage := register("garbage")
	if status != 201 {
		t.Fatalf("after a platform failure, the quota is refunded: %d", status)
	}
	srv.Models.Set(garbage, &servertest.Fake{Output: map[string]any{"answer": 42}})
	runWorker(t, srv)
	v = waitModel(t, srv, garbage, alice.Token)
	if e := v.Evaluations[0]; e.Status != "failed" || e.Fault != "model" || !strings.Contains(e.Reason, "invalid_answer") ||
		strings.Contains(*e.Parts[0].Log, "retrying") {
		t.Fatalf("garbage is parked at once: %+v", e)
	}
	var job2 *dynabench.Job
	evs, _ = srv.Service.Store.FindEvaluations(ctx, dynabench.EvaluationFilter{ModelID: garbage})
	if job2, err = srv.Service.Store.FindJobByKey(ctx, fmt.Sprintf("evaluate:%d", evs[0].ID)); err != nil || job2.State != dynabench.JobParked {
		t.Fatalf("the garbage job is parked: %+v %v", job2, err)
	}
}

// runWorker runs an in-process worker until the test ends.
func runWorker(t *testing.T, srv *servertest.Server) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &worker.Worker{Source: &worker.Local{Service: srv.Service, Name: "test-worker"},
		Predictors: worker.LocalPredictors(srv.Service.Models), Poll: 20 * time.Millisecond, Heartbeat: 50 * time.Millisecond,
		Log: slog.New(slog.DiscardHandler)}
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}
