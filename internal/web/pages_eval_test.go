package web_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/service"
)

// waitRanked waits until the demo task's leaderboard ranks its two published models (the in-process
// worker evaluates them on demo-dev shortly after the server starts) and returns it.
func waitRanked(t testing.TB, srv *servertest.Server, code string) *service.Leaderboard {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		b, err := srv.Service.ComputeLeaderboard(context.Background(), nil, code, service.LeaderboardQuery{})
		if err != nil {
			t.Fatalf("leaderboard %s: %v", code, err)
		}
		if len(b.Rows) >= 2 {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("leaderboard %s: %d rows after 90 s; pending %v", code, len(b.Rows), b.Pending)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// evalScenarios are the leaderboard, model, submit and datasets pages' rows of TestPages (users
// alice and bob, the admin owns every demo task).
func evalScenarios(t *testing.T, srv *servertest.Server) []scenario {
	ctx := context.Background()
	adm := admin(t, srv)
	b := waitRanked(t, srv, "sentiment")
	top, second := b.Rows[0].Model.ID, b.Rows[1].Model.ID
	unpublished := srv.AddModel(t, "sentiment", "secret-model", servertest.Says("positive", "positive", "negative", "neutral"))
	fork, err := srv.Service.CreateFork(ctx, adm, "sentiment", "accuracy only", service.LeaderboardQuery{MetricWeights: map[string]float64{"macro_f1": 1}})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := srv.Service.CreateSnapshot(ctx, adm, "sentiment", "Spring 2026 standings", service.LeaderboardQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// A one-a-day quota on nli: bob's second submission is refused.
	st := srv.Task(t, "nli").Settings
	st.MaxSubmissionsPerDay = 1
	if _, err := srv.Service.UpdateSettings(ctx, adm, "nli", st); err != nil {
		t.Fatal(err)
	}
	model := func(name string) url.Values {
		return url.Values{"name": {name}, "kind": {dynabench.KindDynalab}, "url": {"http://127.0.0.1:9/predict"}, "card": {"# Card"}}
	}
	lb := "/tasks/sentiment/leaderboard"
	mp := func(id int64) string { return fmt.Sprintf("/models/%d", id) }
	return []scenario{
		{name: "leaderboard", method: "GET", path: lb, status: 200,
			has: []string{"#weights", "input[type=range]", "label[for=w-mw-macro_f1]", "#board", "#board-chart-title", ".whisker", "caption",
				"a[href=" + mp(top) + "]", "a[href=/tasks/sentiment/submit]"},
			hasNot: []string{"#fork-name", "#snap-name"}, text: []string{"tie group", "95%", "Macro F1"}},
		{name: "leaderboard: signed in may fork", as: "alice", method: "GET", path: lb, status: 200,
			has: []string{"#fork-name", "select[name=a]", "select[name=b]"}, hasNot: []string{"#snap-name"}},
		{name: "leaderboard: owners may freeze", as: "admin", method: "GET", path: lb, status: 200, has: []string{"#fork-name", "#snap-name"}},
		{name: "leaderboard: sliders without JavaScript", method: "GET", path: lb + "?mw.macro_f1=5&mw.examples_per_second=0&dw.demo-dev=5",
			status: 303, loc: lb + "?dataset_weights=demo-dev%3A5&metric_weights=examples_per_second%3A0%2Cmacro_f1%3A5"},
		{name: "leaderboard: sliders with htmx", method: "GET", path: lb + "?mw.macro_f1=5&mw.examples_per_second=1&dw.demo-dev=5", htmx: true,
			status: 200, has: []string{"#board", "table"}, hasNot: []string{"#weights", "footer"}, hxURL: lb + "?dataset_weights="},
		{name: "leaderboard: weights in the URL", method: "GET", path: lb + "?metric_weights=macro_f1:2,examples_per_second:0", status: 200,
			has: []string{"input[value=2]", "table"}},
		{name: "leaderboard: bad weight", method: "GET", path: lb + "?metric_weights=macro_f1:x", status: 422,
			has: []string{"#weights", "#form-error"}, hasNot: []string{"table"}, text: []string{"metric_weights"}},
		{name: "leaderboard: unknown metric", method: "GET", path: lb + "?metric_weights=bogus:1", status: 422,
			text: []string{"no metric &#34;bogus&#34;"}},
		{name: "leaderboard: hidden task", method: "GET", path: "/tasks/hs/leaderboard", status: 200},
		{name: "fork: save", as: "alice", method: "POST", path: lb + "/forks",
			form: url.Values{"name": {"mine"}, "metric_weights": {"macro_f1:5,examples_per_second:0"}}, status: 303, loc: lb + "/forks/"},
		{name: "fork: name missing", as: "alice", method: "POST", path: lb + "/forks",
			form: url.Values{"name": {""}, "metric_weights": {"macro_f1:5"}}, status: 422,
			text: []string{`id="err-fork-name" role="alert">1 to 100 characters`}, has: []string{"table"}},
		{name: "fork: page", method: "GET", path: lb + "/forks/" + fork.Slug, status: 200, has: []string{"#weights", "table"},
			text: []string{"Fork “accuracy only”"}},
		{name: "fork: missing", method: "GET", path: lb + "/forks/nope", status: 404},
		{name: "snapshot: not for users", as: "alice", method: "POST", path: lb + "/snapshots", form: url.Values{"name": {"x"}}, status: 403},
		{name: "snapshot: freeze", as: "admin", method: "POST", path: lb + "/snapshots", form: url.Values{"name": {"Now"}}, status: 303,
			loc: lb + "/snapshots/"},
		{name: "snapshot: page", method: "GET", path: lb + "/snapshots/" + snap.Slug, status: 200, has: []string{"table", "#board-chart-title"},
			hasNot: []string{"#weights", "#fork-name"}, text: []string{"Spring 2026 standings", "do not change"}},
		{name: "compare", method: "GET", path: fmt.Sprintf("/compare?a=%d&b=%d", top, second), status: 200,
			has: []string{"#comparison"}, text: []string{"demo-dev", "McNemar"}},
		{name: "compare: one model", method: "GET", path: fmt.Sprintf("/compare?a=%d", top), status: 422},
		{name: "model page", method: "GET", path: mp(top), status: 200,
			has:    []string{"#card", ".badge", "#model-status", ".scores", "a[href=/tasks/sentiment/leaderboard]"},
			hasNot: []string{".log", "#publish", "#unpublish", "#evaluate"}, text: []string{"completed", "Macro F1", "examples/s", "Memory"}},
		{name: "model page: owner sees the log and buttons", as: "admin", method: "GET", path: mp(top), status: 200,
			has: []string{".log", "#unpublish", "#evaluate"}},
		{name: "model page: unpublished is not found", method: "GET", path: mp(unpublished), status: 404},
		{name: "model page: unpublished for its owner", as: "admin", method: "GET", path: mp(unpublished), status: 200, has: []string{"#publish"}},
		{name: "model status part for htmx", method: "GET", path: mp(top) + "?part=status", htmx: true, status: 200,
			has: []string{"#model-status"}, hasNot: []string{"#card", "footer"}},
		{name: "publish", as: "admin", method: "POST", path: mp(unpublished) + "/publish", form: url.Values{"published": {"true"}}, status: 303,
			loc: mp(unpublished) + "?saved="},
		{name: "publish: not yours", as: "alice", method: "POST", path: mp(top) + "/publish", form: url.Values{"published": {"false"}}, status: 403},
		{name: "evaluate again", as: "admin", method: "POST", path: mp(top) + "/evaluate", status: 303, loc: mp(top) + "?saved="},
		{name: "submit page asks to log in", method: "GET", path: "/tasks/sentiment/submit", status: 303, loc: "/login?next="},
		{name: "submit page", as: "alice", method: "GET", path: "/tasks/sentiment/submit", status: 200,
			has: []string{"label[for=m-name]", "select[name=kind]", "input[name=url]", "textarea[name=options]", "textarea[name=card]", "#models"}},
		{name: "submit: problems next to fields, input kept", as: "alice", method: "POST", path: "/tasks/sentiment/submit",
			form: url.Values{"name": {"bad name!"}, "kind": {"builtin"}, "url": {"ftp://x"}, "card": {"keep this card"}}, status: 422,
			text: []string{`id="err-url" role="alert">an absolute http or https URL`, `id="err-name" role="alert">`, "keep this card</textarea>",
				`value="bad name!"`}},
		{name: "submit: options not JSON", as: "alice", method: "POST", path: "/tasks/sentiment/submit",
			form: func() url.Values { f := model("m1"); f.Set("options", "{nope"); return f }(), status: 422,
			text: []string{`id="err-options" role="alert">options: a JSON object`, "{nope</textarea>"}},
		{name: "submit: a secret in the options", as: "alice", method: "POST", path: "/tasks/sentiment/submit",
			form: func() url.Values { f := model("m1"); f.Set("options", `{"api_key": "sk-1"}`); return f }(), status: 422,
			text: []string{"options.api_key: secrets are never stored"}},
		{name: "submit", as: "bob", method: "POST", path: "/tasks/nli/submit", form: model("bobs-model"), status: 303, loc: "/models/"},
		{name: "submit: quota", as: "bob", method: "POST", path: "/tasks/nli/submit", form: model("bobs-second"), status: 429,
			has: []string{"#quota", "#form-error"}, text: []string{"Daily submission quota reached"}},
		{name: "datasets", method: "GET", path: "/tasks/sentiment/datasets", status: 200, has: []string{"#datasets"},
			hasNot: []string{"#dataset-form"}, text: []string{"demo-dev", "scoring"}},
		{name: "datasets: owner upload form", as: "admin", method: "GET", path: "/tasks/sentiment/datasets", status: 200,
			has: []string{"#dataset-form", "select[name=access]", "label[for=d-file]"}},
		{name: "datasets: bad line named", as: "admin", method: "POST", path: "/tasks/sentiment/datasets",
			form: url.Values{"name": {"more"}, "access": {"standard"}, "jsonl": {`{"uid":"a","statement":"Fine.","label":"positive"}` + "\n" +
				`{"uid":"b","statement":"Bad.","label":"maybe"}`}}, status: 422,
			text: []string{"line 2", "Nothing was stored"}, has: []string{"input[value=more]"}},
		{name: "datasets: upload", as: "admin", method: "POST", path: "/tasks/sentiment/datasets",
			form: url.Values{"name": {"more"}, "access": {"standard"}, "jsonl": {`{"uid":"a","statement":"Fine.","label":"positive"}` + "\n" +
				`{"uid":"b","statement":"Bad.","label":"negative"}`}}, status: 303, loc: "/tasks/sentiment/datasets?saved="},
		{name: "datasets: not for users", as: "alice", method: "POST", path: "/tasks/sentiment/datasets",
			form: url.Values{"name": {"x"}, "access": {"scoring"}, "jsonl": {`{}`}}, status: 403},
		{name: "task page links", method: "GET", path: "/tasks/sentiment", status: 200,
			has: []string{"a[href=/tasks/sentiment/leaderboard]", "a[href=/tasks/sentiment/submit]", "a[href=/tasks/sentiment/datasets]"}},
	}
}
