package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench/internal/server"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// roundOneFixture starts a server with task t1, a fake model in the loop that always answers
// "positive", and 40 examples in round 1 (labelled negative and neutral, so each fools the model),
// each verified by one matching vote.
func roundOneFixture(t *testing.T, engine string) (*servertest.Server, int64, func(want int, method, path, token string, body any) *servertest.Response) {
	t.Helper()
	srv := servertest.Start(t, engine, servertest.NoDemo)
	alice, bob := srv.User(t, "alice"), srv.User(t, "bob")
	admin := srv.AdminToken
	must := func(want int, method, path, token string, body any) *servertest.Response {
		t.Helper()
		r := srv.Do(t, method, path, token, body)
		if r.Status != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, r.Status, want, r.Body)
		}
		return r
	}
	must(201, "POST", "/api/v1/tasks", admin, map[string]any{"code": "t1", "name": "T1", "config": sentimentConfig})
	st := srv.Task(t, "t1").Settings
	st.NumMatchingValidations = 1
	must(200, "PUT", "/api/v1/tasks/t1/settings", admin, st)
	model := srv.AddModel(t, "t1", "always-positive", servertest.Says("positive", sentimentLabels...))
	must(200, "PUT", "/api/v1/tasks/t1/rounds/1/models", admin, map[string]any{"models": []string{fmt.Sprint(model)}})
	var ctxs strings.Builder
	for i := range 40 {
		fmt.Fprintf(&ctxs, `{"context":{"context":"Scene %d."},"tag":"t%d"}`+"\n", i, i%3)
	}
	must(201, "POST", "/api/v1/tasks/t1/rounds/1/contexts", admin, ndjson(ctxs.String()))
	for i := range 40 {
		c := must(200, "GET", "/api/v1/tasks/t1/context", alice.Token, nil)
		label := []string{"negative", "neutral"}[i%2]
		ex := must(201, "POST", "/api/v1/tasks/t1/examples", alice.Token, map[string]any{"context_id": c.String("id"),
			"input": map[string]any{"statement": fmt.Sprintf("%s statement number %d", label, i), "label": label}})
		must(201, "POST", "/api/v1/examples/"+ex.String("example.id")+"/validations", bob.Token, map[string]any{"label": "correct"})
	}

	return srv, model, must
}

// TestReleaseCycle: a round's verified examples are released only once the round is closed, as
// files whose manifest adds up, with the test split joining the scoring datasets; exports never
// carry a username; a model trained on released rounds sees only their train splits; an empty round
// and bad imports are refused clearly.
func TestReleaseCycle(t *testing.T) {
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv, model, must := roundOneFixture(t, engine)
			admin := srv.AdminToken
			carol := srv.User(t, "carol") // neither owner nor contributor
			// The round is open: no release, no export.
			if r := must(409, "POST", "/api/v1/tasks/t1/rounds/1/release", admin, nil); r.String("error.field") != "round" {
				t.Fatalf("open round: %s", r.Body)
			}
			must(409, "GET", "/api/v1/tasks/t1/rounds/1/export", admin, nil)
			must(201, "POST", "/api/v1/tasks/t1/rounds", admin, map[string]any{"models": []string{fmt.Sprint(model)}})

			// Exports: every example, anonymised.
			for _, format := range []string{"jsonl", "csv", "hf"} {
				r := must(200, "GET", "/api/v1/tasks/t1/rounds/1/export?format="+format, admin, nil)
				body := string(r.Body)
				if strings.Contains(body, "alice") || strings.Contains(body, "bob") {
					t.Fatalf("%s export names a user", format)
				}
				lines := strings.Count(strings.TrimSpace(body), "\n") + 1
				if want := map[string]int{"jsonl": 40, "hf": 40, "csv": 41}[format]; lines != want {
					t.Fatalf("%s export: %d lines, want %d", format, lines, want)
				}
				if format == "jsonl" && !strings.Contains(body, `"anon_uid"`) {
					t.Fatalf("jsonl export without anon_uid: %.300s", body)
				}
			}
			must(403, "GET", "/api/v1/tasks/t1/rounds/1/export", carol.Token, nil)

			// The release.
			r := must(201, "POST", "/api/v1/tasks/t1/rounds/1/release", admin, map[string]any{"ratios": map[string]any{"train": 0.5, "dev": 0.2, "test": 0.3}})
			var rel struct {
				Version  int    `json:"version"`
				Dataset  string `json:"dataset"`
				Canary   string `json:"canary"`
				Files    string `json:"files"`
				Manifest struct {
					Splits []struct {
						Name  string `json:"name"`
						Count int    `json:"examples"`
					} `json:"splits"`
					Files []struct {
						Path   string `json:"path"`
						SHA256 string `json:"sha256"`
					} `json:"files"`
				} `json:"manifest"`
			}
			if err := json.Unmarshal(r.Body, &rel); err != nil {
				t.Fatal(err)
			}
			total, test := 0, 0
			for _, sp := range rel.Manifest.Splits {
				total += sp.Count
				if sp.Name == "test" {
					test = sp.Count
				}
			}
			if rel.Version != 1 || total != 40 || test == 0 || rel.Dataset != "round-1-test" || !strings.HasPrefix(rel.Canary, "DYNABENCH CANARY") {
				t.Fatalf("release: %s", r.Body)
			}
			ds := must(200, "GET", "/api/v1/tasks/t1/datasets", admin, nil)
			if ds.String("datasets[0].name") != "round-1-test" || ds.String("datasets[0].size") != fmt.Sprint(test) || ds.String("datasets[0].round") != "1" {
				t.Fatalf("the test split as a scoring dataset: %s", ds.Body)
			}
			// Files: owners only (not public), and only the manifest's.
			f := must(200, "GET", rel.Files+"data/test.jsonl", admin, nil)
			if got := strings.Count(strings.TrimSpace(string(f.Body)), "\n") + 1; got != test || !strings.Contains(string(f.Body), rel.Canary) {
				t.Fatalf("data/test.jsonl: %d lines, want %d", got, test)
			}
			must(404, "GET", rel.Files+"data/test.jsonl", carol.Token, nil)
			must(404, "GET", rel.Files+"../../../../etc/passwd", admin, nil)
			if again := must(201, "POST", "/api/v1/tasks/t1/rounds/1/release", admin, map[string]any{"ratios": map[string]any{"train": 0.5, "dev": 0.2, "test": 0.3}}); again.String("version") != "2" {
				t.Fatalf("a second release is version 2: %s", again.Body)
			}

			// The cycle view: round 1's model in the loop (always "positive") scored on round 1's test
			// split, whose labels are negative and neutral: 0%, once the worker ran it.
			deadline := time.Now().Add(30 * time.Second)
			for {
				c := must(200, "GET", "/api/v1/tasks/t1/cycle", "", nil)
				if c.String("rounds[0].scores.1") == "0" && c.String("tested[0]") == "1" && c.String("metric") == "macro_f1" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("cycle: %s", c.Body)
				}
				time.Sleep(20 * time.Millisecond)
			}

			// Training on released rounds uses their train splits only.
			tr := must(201, "POST", "/api/v1/tasks/t1/models/train", admin, map[string]any{"name": "r1-train", "rounds": []int{1},
				"seed_data": false, "released_only": true})
			if !strings.Contains(string(tr.Body), "round:1:train") {
				t.Fatalf("trained on: %s", tr.Body)
			}
			// Round 2 is open; round 3 closes it empty.
			must(201, "POST", "/api/v1/tasks/t1/rounds", admin, map[string]any{"models": []string{fmt.Sprint(model)}})
			if r := must(422, "POST", "/api/v1/tasks/t1/rounds/2/release", admin, nil); !strings.Contains(r.String("error.message"), "no verified examples") {
				t.Fatalf("empty round: %s", r.Body)
			}
			must(422, "POST", "/api/v1/tasks/t1/models/train", admin, map[string]any{"name": "r2", "rounds": []int{2}, "seed_data": false, "released_only": true})

			// Imports as examples of the current round (round 3), counted like any example.
			imp := must(201, "POST", "/api/v1/tasks/t1/import?format=dynasent&name=dynasent-r1&as=round", admin,
				ndjson(`{"text_id":"a","sentence":"Good.","gold_label":"positive"}`+"\n"+`{"text_id":"b","sentence":"Bad.","gold_label":"negative"}`+"\n"+
					`{"text_id":"c","sentence":"Fine, I guess.","gold_label":"neutral"}`+"\n"))
			if imp.String("examples") != "3" {
				t.Fatalf("import as round: %s", imp.Body)
			}
			if r3 := must(200, "GET", "/api/v1/tasks/t1/rounds/3", admin, nil); r3.String("stats.collected") != "3" {
				t.Fatalf("round 3 after the import: %s", r3.Body)
			}
			must(422, "POST", "/api/v1/tasks/t1/import?format=dynasent&name=x&as=round", admin,
				ndjson(`{"text_id":"a","sentence":"Good.","gold_label":"happy"}`+"\n"))

			// Imports name the bad line.
			bad := must(422, "POST", "/api/v1/tasks/t1/import?format=dynasent&name=ds", admin,
				ndjson(`{"text_id":"1","sentence":"Good.","gold_label":"positive"}`+"\n"+`{"text_id":"2","sentence": 7, "gold_label":"positive"}`+"\n"))
			if !strings.Contains(bad.String("error.field"), "2") {
				t.Fatalf("bad import: %s", bad.Body)
			}
			srv.NoDrift(t)
		})
	}
}

// TestCycleJob: one turn of the retraining cycle as a job: close round 1, release it, train on its
// train split, put the new model in the loop of round 2; its progress is readable while it runs, and
// the cycle view then scores round 2's model on round 1's test split.
func TestCycleJob(t *testing.T) {
	srv, _, must := roundOneFixture(t, enginesFirst())
	admin := srv.AdminToken
	r := must(202, "POST", "/api/v1/tasks/t1/rounds/cycle", admin, map[string]any{"retrain": true, "seed_data": false,
		"ratios": map[string]any{"train": 0.5, "dev": 0.2, "test": 0.3}})
	job := r.String("id")
	if again := must(202, "POST", "/api/v1/tasks/t1/rounds/cycle", admin, map[string]any{"retrain": true}); again.String("id") != job {
		t.Fatalf("the same round's cycle is one job: %s vs %s", again.String("id"), job)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		j := must(200, "GET", "/api/v1/jobs/"+job, admin, nil)
		if j.String("state") == "done" {
			var v struct {
				Progress []struct{ Step, Message string } `json:"progress"`
			}
			json.Unmarshal(j.Body, &v)
			var steps []string
			for _, p := range v.Progress {
				steps = append(steps, p.Step)
			}
			if strings.Join(steps, ",") != "close,release,train,train,loop" {
				t.Fatalf("progress: %s", j.Body)
			}
			break
		}
		if j.String("state") == "parked" || time.Now().After(deadline) {
			t.Fatalf("cycle job: %s", j.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	round := must(200, "GET", "/api/v1/tasks/t1/rounds/2", admin, nil)
	models := must(200, "GET", "/api/v1/tasks/t1/models", admin, nil)
	if !strings.Contains(string(models.Body), `"t1-builtin-r2"`) || round.String("status") != "open" || round.String("models[0]") == "" {
		t.Fatalf("round 2: %s; models: %s", round.Body, models.Body)
	}
	for {
		c := must(200, "GET", "/api/v1/tasks/t1/cycle", "", nil)
		if c.String("rounds[1].models[0].name") == "t1-builtin-r2" && c.String("rounds[1].scores.1") != "" && c.String("rounds[0].scores.1") == "0" {
			// The leaderboard's trend: the best published model on round 1's test split.
			b := must(200, "GET", "/api/v1/tasks/t1/leaderboard", "", nil)
			if b.String("trend[0].round") != "1" || b.String("trend[0].model.name") != "t1-builtin-r2" ||
				b.String("trend[0].value") != c.String("rounds[1].scores.1") {
				t.Fatalf("trend: %s\ncycle: %s", b.Body, c.Body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cycle: %s", c.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestImportANLIAsRound: ANLI's published lines become verified examples of the NLI task's current
// round; those whose model_label differs from the gold label count as fooling the model.
func TestImportANLIAsRound(t *testing.T) {
	srv := servertest.Start(t, enginesFirst())
	body := `{"uid":"a1","premise":"A man plays a guitar on a stage.","hypothesis":"A person makes music.","label":"e","model_label":"n","reason":"music"}
{"uid":"a2","premise":"A man plays a guitar on a stage.","hypothesis":"The stage is empty.","label":"c","model_label":"c"}
{"uid":"a3","premise":"Two dogs run in the snow.","hypothesis":"The dogs are cold.","label":"n","model_label":"e"}
`
	r := srv.Do(t, "POST", "/api/v1/tasks/nli/import?format=anli&name=anli-r1&as=round", srv.AdminToken, ndjson(body))
	if r.Status != 201 || r.String("examples") != "3" {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
	round := srv.Do(t, "GET", "/api/v1/tasks/nli/rounds/1", "", nil)
	if round.String("stats.collected") != "3" || round.String("stats.fooled") != "2" || round.String("stats.verified_fooled") != "2" {
		t.Fatalf("round 1: %s", round.Body)
	}
	srv.NoDrift(t)
}

// TestCycleJobWithoutEvaluationWorkers: a server whose evaluation runs on remote workers
// (serve --workers 0) still runs the cycle itself, since remote workers only evaluate.
func TestCycleJobWithoutEvaluationWorkers(t *testing.T) {
	srv := servertest.Start(t, enginesFirst(), servertest.NoDemo, func(c *server.Config) { c.Workers = 0 })
	if r := srv.Do(t, "POST", "/api/v1/tasks", srv.AdminToken, map[string]any{"code": "t1", "name": "T1", "config": sentimentConfig}); r.Status != 201 {
		t.Fatalf("task: %d %s", r.Status, r.Body)
	}
	r := srv.Do(t, "POST", "/api/v1/tasks/t1/rounds/cycle", srv.AdminToken, nil)
	if r.Status != 202 {
		t.Fatalf("cycle: %d %s", r.Status, r.Body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		j := srv.Do(t, "GET", "/api/v1/jobs/"+r.String("id"), srv.AdminToken, nil)
		if j.String("state") == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cycle job never ran: %s", j.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if task := srv.Do(t, "GET", "/api/v1/tasks/t1", "", nil); task.String("current_round") != "2" {
		t.Fatalf("round not advanced: %s", task.Body)
	}
}
