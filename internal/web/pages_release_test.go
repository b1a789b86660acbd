package web_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/service"
)

// releaseScenarios are the release, export and retraining rows of TestPages, on the hs task (which
// the earlier rows leave alone once they ran): alice wrote twelve examples in its round 1, which the
// admin verified as owner. The rows close round 1, release it, look at the release, make it public,
// export the round, retrain, and see the cycle on the task page. They run last, in order.
func releaseScenarios(t *testing.T, srv *servertest.Server) []scenario {
	ctx := context.Background()
	adm := admin(t, srv)
	alice, err := srv.Service.Store.FindUserByUsername(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	c, err := srv.Service.PickContext(ctx, alice, "hs", "", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		e, err := srv.Service.CreateExample(ctx, alice, "hs", service.NewExample{ContextID: c.ID,
			Input: map[string]any{"statement": fmt.Sprintf("Statement number %d.", i), "label": []string{"hateful", "not-hateful"}[i%2]}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Service.Validate(ctx, adm, e.ID, service.NewValidation{Label: dynabench.LabelCorrect, Mode: dynabench.ModeOwner}); err != nil {
			t.Fatal(err)
		}
	}
	ratios := func(train, dev, test string) url.Values {
		return url.Values{"train": {train}, "dev": {dev}, "test": {test}, "license": {"cc-by-4.0"}}
	}
	file := func(path string) string { return "/tasks/hs/rounds/1/releases/1/files?path=" + url.QueryEscape(path) }
	return []scenario{
		{name: "release: round still open", as: "admin", method: "POST", path: "/tasks/hs/rounds/1/release", form: ratios("0.8", "0.1", "0.1"),
			status: 409, has: []string{"#form-error"}, text: []string{"Round 1 is still open: open the next round first"}},
		{name: "export: round still open", as: "admin", method: "GET", path: "/tasks/hs/rounds/1/export?format=csv", status: 409},
		{name: "rounds: nothing closed yet", as: "admin", method: "GET", path: "/tasks/hs/rounds", status: 200,
			has: []string{"#no-closed", "a[href=/tasks/hs/releases]"}, hasNot: []string{"#retrain-form", "#rel1-train"}},
		{name: "task page: nothing released", method: "GET", path: "/tasks/hs", status: 200,
			has: []string{"#cycle-title", "#no-cycle", "a[href=/tasks/hs/releases]"}, hasNot: []string{"#cycle-chart-title"}},
		{name: "releases: none yet", method: "GET", path: "/tasks/hs/releases", status: 200, has: []string{"#no-releases"},
			text: []string{"No public release"}},
		{name: "rounds: open round 2", as: "admin", method: "POST", path: "/tasks/hs/rounds", status: 303, loc: "/tasks/hs/rounds?saved=Round+2"},
		{name: "rounds: release form and exports", as: "admin", method: "GET", path: "/tasks/hs/rounds", status: 200,
			has: []string{"#round-1", "label[for=rel1-train]", "#rel1-dev", "#rel1-test", "input[value=0.8]", "label[for=rel1-license]", "#rel1-public",
				"a[href=/tasks/hs/rounds/1/export?format=csv]", "a[href=/tasks/hs/rounds/1/export?format=hf]"},
			hasNot: []string{"#retrain-form", "#no-closed"}, text: []string{"not released yet"}},
		{name: "release: a ratio that is not a number", as: "admin", method: "POST", path: "/tasks/hs/rounds/1/release",
			form: ratios("abc", "0.1", "0.1"), status: 422, has: []string{"#form-error", "input[value=abc]", "input[value=cc-by-4.0]"},
			text: []string{`id="err-rel1-train" role="alert">a number between 0 and 1`, "Round 1 was not released: fix the problem marked"}},
		{name: "release: ratios that do not sum to 1", as: "admin", method: "POST", path: "/tasks/hs/rounds/1/release",
			form: ratios("0.9", "0.2", "0.1"), status: 422, has: []string{"input[value=0.9]"},
			text: []string{`id="err-rel1-ratios" role="alert">train &#43; dev &#43; test must be 1; these add up to 1.2`}},
		{name: "release: not for users", as: "alice", method: "POST", path: "/tasks/hs/rounds/1/release", form: ratios("0.5", "0", "0.5"), status: 403},
		{name: "release", as: "admin", method: "POST", path: "/tasks/hs/rounds/1/release", form: ratios("0.5", "0", "0.5"), status: 303,
			loc: "/tasks/hs/releases?saved=Round+1+released+as+version+1%3A+12+examples."},
		{name: "releases: private, so none for anonymous", method: "GET", path: "/tasks/hs/releases", status: 200,
			has: []string{"#no-releases"}, hasNot: []string{"#release-1-v1"}},
		{name: "releases: the owner's view", as: "admin", method: "GET", path: "/tasks/hs/releases", status: 200,
			has: []string{"#release-1-v1", ".splits", "details[open]", "pre", "a[href=" + file("README.md") + "]",
				"a[href=" + file("DATASHEET.md") + "]", "a[href=" + file("manifest.json") + "]", "form[action=/tasks/hs/rounds/1/releases/1/public]"},
			text: []string{"cc-by-4.0", "private", "Make public", "Canary", "hateful", "not-hateful", "50 / 0 / 50 %", "round-1-test"}},
		{name: "release file: private", method: "GET", path: file("README.md"), status: 404},
		{name: "release file: markdown shown as text", as: "admin", method: "GET", path: file("README.md"), status: 200,
			header: map[string]string{"Content-Type": "text/plain; charset=utf-8", "Content-Disposition": `inline; filename="README.md"`}},
		{name: "release file: not in the manifest", as: "admin", method: "GET", path: file("../../../etc/passwd"), status: 404},
		{name: "release: make public", as: "admin", method: "POST", path: "/tasks/hs/rounds/1/releases/1/public", form: url.Values{"public": {"true"}},
			status: 303, loc: "/tasks/hs/releases?saved=Round+1+version+1+is+now+public"},
		{name: "release: toggle not for users", as: "alice", method: "POST", path: "/tasks/hs/rounds/1/releases/1/public",
			form: url.Values{"public": {"false"}}, status: 403},
		{name: "releases: public for anonymous", method: "GET", path: "/tasks/hs/releases", status: 200,
			has: []string{"#release-1-v1", "a[href=" + file("DATASHEET.md") + "]"}, hasNot: []string{"form[action=/tasks/hs/rounds/1/releases/1/public]"},
			text: []string{"public"}},
		{name: "release file: public manifest", method: "GET", path: file("manifest.json"), status: 200,
			header: map[string]string{"Content-Type": "application/json"}, text: []string{`"canary"`}},
		{name: "export: csv", as: "admin", method: "GET", path: "/tasks/hs/rounds/1/export?format=csv", status: 200,
			header: map[string]string{"Content-Type": "text/csv", "Content-Disposition": `attachment; filename="hs-round-1.csv"`}},
		{name: "export: Hugging Face rows", as: "admin", method: "GET", path: "/tasks/hs/rounds/1/export?format=hf", status: 200,
			header: map[string]string{"Content-Disposition": `attachment; filename="hs-round-1-hf.jsonl"`}, text: []string{"Statement number 3."}},
		{name: "export: unknown format", as: "admin", method: "GET", path: "/tasks/hs/rounds/1/export?format=xml", status: 422,
			text: []string{"jsonl, csv or hf"}},
		{name: "export: not for users", as: "alice", method: "GET", path: "/tasks/hs/rounds/1/export", status: 403},
		{name: "rounds: released, the retrain form", as: "admin", method: "GET", path: "/tasks/hs/rounds", status: 200,
			has:  []string{"#retrain-form", "input[value=hs-builtin-r2]", "#retrain-seed", "a[href=/tasks/hs/releases#release-1-v1]"},
			text: []string{"Release round 1 again"}},
		{name: "retrain: bad name", as: "admin", method: "POST", path: "/tasks/hs/retrain", form: url.Values{"name": {"bad name!"}, "seed_data": {"1"}},
			status: 422, has: []string{"input[value=bad name!]"}, text: []string{`id="err-retrain-name" role="alert">`, "No model was trained."}},
		{name: "retrain", as: "admin", method: "POST", path: "/tasks/hs/retrain", form: url.Values{"name": {"hs-builtin-r2"}, "seed_data": {"1"}},
			status: 303, loc: "/tasks/hs/rounds?trained="},
		{name: "task page: the cycle", method: "GET", path: "/tasks/hs", status: 200,
			has:  []string{"#cycle-chart-title", "#vmer-chart-title", ".cycle-table", ".c-vbar", "a[href=/tasks/hs/releases]"},
			text: []string{"R1 test", "hs-builtin-r2"}},
	}
}
