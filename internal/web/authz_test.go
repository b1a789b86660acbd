package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/service"
)

// The roles of the matrix, in column order.
const (
	anon   = iota
	user   // alice: wrote the examples, holds the token
	other  // bob: owns and wrote nothing
	owner  // olga: an owner of the sentiment task, not an admin
	adminR // the bootstrap admin
	nroles
)

var roleUser = [nroles]string{"", "alice", "bob", "olga", "admin"}

// webAuthz is the expected status of every page route per role. Anonymous visitors of pages that
// need an account are sent to the login page (303); non-owners get 403 on a visible task's owner
// pages and 404 on a hidden task's, as the rules answer. A 303 for a logged-in role is the
// redirect after a successful POST.
type authzCase struct {
	path string
	form url.Values
	want [nroles]int
}

func all(s int) [nroles]int { return [nroles]int{s, s, s, s, s} }

type authzFix struct {
	srv              *servertest.Server
	tokenID          int64
	explain, retract int64
	flag, vote       int64
	carolID          int64
	published        int64 // a demo model of the sentiment task
	alicesModel      int64 // alice's unpublished model of the sentiment task
	fork, snapshot   string
	// nli (olga owns it too): round 1 closed with a private release v1 and a public v2; round 2 open.
}

func webAuthzCases(f *authzFix) map[string][]authzCase {
	ownerPage := [nroles]int{303, 403, 403, 200, 200}
	ownerPost := [nroles]int{303, 403, 403, 303, 303}
	ownerBad := [nroles]int{303, 403, 403, 422, 422}
	mine := [nroles]int{303, 303, 404, 404, 404}
	in := url.Values{"context_id": {"CTX"}, "in.statement": {"fine"}, "in.label": {"negative"}, "sandbox": {"1"}}
	return map[string][]authzCase{
		"GET /{$}":       {{path: "/", want: all(200)}},
		"GET /login":     {{path: "/login", want: [nroles]int{200, 303, 303, 303, 303}}},
		"POST /login":    {{path: "/login", form: url.Values{"username": {"alice"}, "password": {"wrong-password"}}, want: all(401)}},
		"GET /register":  {{path: "/register", want: all(200)}},
		"POST /register": {{path: "/register", form: url.Values{"username": {"!"}}, want: all(422)}},
		"POST /logout":   {{path: "/logout", want: all(303)}},
		"GET /profile":   {{path: "/profile", want: [nroles]int{303, 200, 200, 200, 200}}},
		"POST /profile/tokens": {{path: "/profile/tokens", form: url.Values{"name": {"t"}},
			want: [nroles]int{303, 200, 200, 200, 200}}},
		"POST /profile/tokens/{id}/revoke": {{path: fmt.Sprintf("/profile/tokens/%d/revoke", f.tokenID), want: mine}},
		"GET /tasks/{code}": {{path: "/tasks/sentiment", want: all(200)},
			{path: "/tasks/hidden", want: [nroles]int{404, 404, 404, 404, 200}}},
		"GET /tasks/{code}/create": {{path: "/tasks/sentiment/create?context=CTX", want: [nroles]int{303, 200, 200, 200, 200}},
			{path: "/tasks/hidden/create", want: [nroles]int{303, 404, 404, 404, 303}}},
		"POST /tasks/{code}/create": {{path: "/tasks/sentiment/create", form: in, want: [nroles]int{303, 200, 200, 200, 200}}},
		"POST /tasks/{code}/examples/{id}/explain": {{path: fmt.Sprintf("/tasks/sentiment/examples/%d/explain", f.explain),
			form: url.Values{"meta.example_explanation": {"because"}}, want: mine}},
		"POST /tasks/{code}/examples/{id}/retract": {{path: fmt.Sprintf("/tasks/sentiment/examples/%d/retract", f.retract), want: mine}},
		"POST /tasks/{code}/examples/{id}/flag":    {{path: fmt.Sprintf("/tasks/sentiment/examples/%d/flag", f.flag), want: mine}},
		"GET /tasks/{code}/validate": {{path: "/tasks/sentiment/validate", want: [nroles]int{303, 200, 200, 200, 200}},
			{path: "/tasks/hidden/validate", want: [nroles]int{303, 404, 404, 404, 200}}},
		"POST /tasks/{code}/validate/{id}": {{path: fmt.Sprintf("/tasks/sentiment/validate/%d", f.vote),
			form: url.Values{"label": {"correct"}}, want: [nroles]int{303, 403, 200, 200, 200}}},
		"GET /tasks/{code}/settings": {{path: "/tasks/sentiment/settings", want: ownerPage},
			{path: "/tasks/hidden/settings", want: [nroles]int{303, 404, 404, 404, 200}}},
		"POST /tasks/{code}/settings": {{path: "/tasks/sentiment/settings",
			form: url.Values{"num_matching_validations": {"3"}, "context_strategy": {"least_used"}, "max_examples_per_day": {"0"},
				"model_timeout_ms": {"5000"}}, want: ownerPost}},
		"POST /tasks/{code}/config": {{path: "/tasks/sentiment/config", form: url.Values{"config": {"input: 3"}}, want: ownerBad}},
		"GET /tasks/{code}/contexts": {{path: "/tasks/sentiment/contexts", want: ownerPage},
			{path: "/tasks/hidden/contexts", want: [nroles]int{303, 404, 404, 404, 200}}},
		"POST /tasks/{code}/contexts": {{path: "/tasks/sentiment/contexts",
			form: url.Values{"round": {"1"}, "jsonl": {`{"context":{"context":"More."}}`}}, want: ownerPost}},
		"GET /tasks/{code}/rounds":             {{path: "/tasks/sentiment/rounds", want: ownerPage}},
		"POST /tasks/{code}/rounds":            {{path: "/tasks/sentiment/rounds", form: url.Values{"model": {"999999"}}, want: ownerBad}},
		"POST /tasks/{code}/rounds/{n}/models": {{path: "/tasks/sentiment/rounds/1/models", form: url.Values{"model": {"999999"}}, want: ownerBad}},
		"POST /tasks/{code}/rounds/{n}/release": {{path: "/tasks/nli/rounds/2/release", form: url.Values{"train": {"0.8"}, "dev": {"0.1"}, "test": {"0.1"}},
			want: [nroles]int{303, 403, 403, 409, 409}}},
		"GET /tasks/{code}/rounds/{n}/export": {{path: "/tasks/nli/rounds/1/export?format=csv", want: ownerPage},
			{path: "/tasks/nli/rounds/2/export", want: [nroles]int{303, 403, 403, 409, 409}},
			{path: "/tasks/hidden/rounds/1/export", want: [nroles]int{303, 404, 404, 404, 409}}},
		"POST /tasks/{code}/retrain": {{path: "/tasks/nli/retrain", form: url.Values{"name": {"bad name!"}}, want: ownerBad}},
		"GET /tasks/{code}/releases": {{path: "/tasks/nli/releases", want: all(200)},
			{path: "/tasks/hidden/releases", want: [nroles]int{404, 404, 404, 404, 200}}},
		"POST /tasks/{code}/rounds/{n}/releases/{v}/public": {{path: "/tasks/nli/rounds/1/releases/2/public", form: url.Values{"public": {"true"}},
			want: ownerPost}},
		"GET /tasks/{code}/rounds/{n}/releases/{v}/files": {{path: "/tasks/nli/rounds/1/releases/1/files?path=README.md",
			want: [nroles]int{404, 404, 404, 200, 200}},
			{path: "/tasks/nli/rounds/1/releases/2/files?path=DATASHEET.md", want: all(200)},
			{path: "/tasks/nli/rounds/1/releases/2/files?path=../../secret", want: all(404)}},
		"GET /tasks/{code}/flagged":       {{path: "/tasks/sentiment/flagged", want: ownerPage}},
		"POST /tasks/{code}/flagged/{id}": {{path: fmt.Sprintf("/tasks/sentiment/flagged/%d", f.flag), form: url.Values{"label": {"correct"}}, want: ownerPost}},
		"GET /tasks/{code}/leaderboard": {{path: "/tasks/sentiment/leaderboard", want: all(200)},
			{path: "/tasks/hidden/leaderboard", want: [nroles]int{404, 404, 404, 404, 200}}},
		"POST /tasks/{code}/leaderboard/forks": {{path: "/tasks/sentiment/leaderboard/forks", form: url.Values{"name": {"f"}}, want: all(303)},
			{path: "/tasks/hidden/leaderboard/forks", form: url.Values{"name": {"f"}}, want: [nroles]int{404, 404, 404, 404, 303}}},
		"GET /tasks/{code}/leaderboard/forks/{slug}": {{path: "/tasks/sentiment/leaderboard/forks/" + f.fork, want: all(200)},
			{path: "/tasks/nli/leaderboard/forks/" + f.fork, want: all(404)}},
		"POST /tasks/{code}/leaderboard/snapshots": {{path: "/tasks/sentiment/leaderboard/snapshots", form: url.Values{"name": {"s"}}, want: ownerPost},
			{path: "/tasks/hidden/leaderboard/snapshots", form: url.Values{"name": {"s"}}, want: [nroles]int{404, 404, 404, 404, 303}}},
		"GET /tasks/{code}/leaderboard/snapshots/{slug}": {{path: "/tasks/sentiment/leaderboard/snapshots/" + f.snapshot, want: all(200)},
			{path: "/tasks/hidden/leaderboard/snapshots/" + f.snapshot, want: [nroles]int{404, 404, 404, 404, 404}}},
		"GET /compare": {{path: fmt.Sprintf("/compare?a=%d&b=%d", f.published, f.alicesModel), want: [nroles]int{404, 200, 404, 200, 200}}},
		"GET /models/{id}": {{path: fmt.Sprintf("/models/%d", f.published), want: all(200)},
			{path: fmt.Sprintf("/models/%d", f.alicesModel), want: [nroles]int{404, 200, 404, 200, 200}}},
		"POST /models/{id}/publish": {{path: fmt.Sprintf("/models/%d/publish", f.alicesModel), form: url.Values{"published": {"false"}},
			want: [nroles]int{303, 303, 404, 403, 303}}},
		"POST /models/{id}/evaluate": {{path: fmt.Sprintf("/models/%d/evaluate", f.alicesModel), want: [nroles]int{303, 303, 404, 303, 303}}},
		"GET /tasks/{code}/submit": {{path: "/tasks/sentiment/submit", want: [nroles]int{303, 200, 200, 200, 200}},
			{path: "/tasks/hidden/submit", want: [nroles]int{303, 404, 404, 404, 200}}},
		"POST /tasks/{code}/submit": {{path: "/tasks/sentiment/submit", form: url.Values{"name": {"m"}, "kind": {"dynalab"}, "url": {"nope"}},
			want: [nroles]int{303, 422, 422, 422, 422}},
			{path: "/tasks/hidden/submit", form: url.Values{"name": {"m"}, "kind": {"dynalab"}, "url": {"nope"}}, want: [nroles]int{303, 404, 404, 404, 422}}},
		"GET /tasks/{code}/datasets": {{path: "/tasks/sentiment/datasets", want: all(200)},
			{path: "/tasks/hidden/datasets", want: [nroles]int{404, 404, 404, 404, 200}}},
		"POST /tasks/{code}/datasets": {{path: "/tasks/sentiment/datasets", form: url.Values{"name": {"x"}, "access": {"scoring"}, "jsonl": {"{}"}},
			want: ownerBad},
			{path: "/tasks/hidden/datasets", form: url.Values{"name": {"x"}, "access": {"scoring"}, "jsonl": {"{}"}}, want: [nroles]int{303, 404, 404, 404, 422}}},
		"GET /admin/users":            {{path: "/admin/users", want: [nroles]int{303, 403, 403, 403, 200}}},
		"POST /admin/users/{id}/role": {{path: fmt.Sprintf("/admin/users/%d/role", f.carolID), form: url.Values{"admin": {"false"}}, want: [nroles]int{303, 403, 403, 403, 303}}},
	}
}

// TestWebAuthz checks every page route for every role, and that every route has a row.
func TestWebAuthz(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, "sqlite")
	ctx := context.Background()
	alice, olga, carol := srv.User(t, "alice"), srv.User(t, "olga"), srv.User(t, "carol")
	srv.User(t, "bob")
	makeOwner(t, srv, "sentiment", olga.ID)
	adm := admin(t, srv)
	// A hidden task: only its owners (the admin) see it.
	if _, err := srv.Service.UpdateSettings(ctx, adm, "hs", dynabench.TaskSettings{Hidden: true}); err != nil {
		t.Fatal(err)
	}
	aliceUser, err := srv.Service.Store.FindUserByID(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := srv.Service.CreateAPIToken(ctx, aliceUser, "matrix")
	if err != nil {
		t.Fatal(err)
	}
	c, err := srv.Service.PickContext(ctx, aliceUser, "sentiment", "", "")
	if err != nil {
		t.Fatal(err)
	}
	example := func(text string) int64 {
		e, err := srv.Service.CreateExample(ctx, aliceUser, "sentiment", service.NewExample{ContextID: c.ID,
			Input: map[string]any{"statement": text, "label": "negative"}})
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	f := &authzFix{srv: srv, tokenID: tok.ID, explain: example("one"), retract: example("two"), flag: example("three"),
		vote: example("four"), carolID: carol.ID}
	// A published demo model, alice's unpublished model, a fork and a snapshot.
	ms, err := srv.Service.TaskModels(ctx, nil, "sentiment")
	if err != nil || len(ms) == 0 {
		t.Fatalf("demo models: %v", err)
	}
	f.published = ms[0].ID
	am, err := srv.Service.RegisterModel(ctx, aliceUser, "sentiment", service.NewModel{Name: "alices-model", Kind: dynabench.KindDynalab,
		URL: "http://127.0.0.1:9/predict"})
	if err != nil {
		t.Fatal(err)
	}
	srv.Models.Set(am.ID, servertest.Says("positive", "positive", "negative", "neutral"))
	f.alicesModel = am.ID
	fk, err := srv.Service.CreateFork(ctx, aliceUser, "sentiment", "mine", service.LeaderboardQuery{})
	if err != nil {
		t.Fatal(err)
	}
	sn, err := srv.Service.CreateSnapshot(ctx, adm, "sentiment", "now", service.LeaderboardQuery{})
	if err != nil {
		t.Fatal(err)
	}
	f.fork, f.snapshot = fk.Slug, sn.Slug
	releaseFixture(t, srv, aliceUser, olga.ID)
	cases := webAuthzCases(f)
	routes := srv.Web.Routes()
	for _, r := range routes {
		if _, ok := cases[r]; !ok {
			t.Errorf("route %s has no row in the web authorization matrix", r)
		}
	}
	for r := range cases {
		if !slices.Contains(routes, r) {
			t.Errorf("the matrix has a row for %s, which is not a route", r)
		}
	}
	// Rows name the hidden task "hidden"; it is the demo's hs task.
	for role := range nroles {
		for _, route := range sortedKeys(cases) {
			for _, cs := range cases[route] {
				if route == "POST /logout" {
					continue // run last: it ends the session
				}
				checkAuthz(t, srv, role, route, cs, c.ID)
			}
		}
		checkAuthz(t, srv, role, "POST /logout", cases["POST /logout"][0], c.ID)
	}
}

func checkAuthz(t *testing.T, srv *servertest.Server, role int, route string, cs authzCase, ctxID int64) {
	t.Helper()
	v := newVisitor(srv)
	if role != anon {
		pw := "password-" + roleUser[role]
		if role == adminR {
			pw = servertest.AdminPassword
		}
		v = loggedIn(t, srv, roleUser[role], pw)
	}
	path := strings.ReplaceAll(cs.path, "/tasks/hidden", "/tasks/hs")
	var p *page
	if strings.HasPrefix(route, "GET ") {
		p = v.get(t, strings.ReplaceAll(path, "CTX", fmt.Sprint(ctxID)))
	} else {
		form := url.Values{}
		for k, vs := range cs.form {
			for _, x := range vs {
				form.Add(k, strings.ReplaceAll(x, "CTX", fmt.Sprint(ctxID)))
			}
		}
		p = v.post(t, path, form)
	}
	if want := cs.want[role]; p.Status != want {
		t.Errorf("%s (%s) as %s: status %d, want %d", route, path, roleName(role), p.Status, want)
	}
	if role == anon && p.Status == http.StatusSeeOther && !strings.HasPrefix(p.Location, "/login") && route != "POST /logout" {
		t.Errorf("%s as anonymous: redirected to %s, not to the login page", route, p.Location)
	}
}

func roleName(r int) string {
	return [nroles]string{"anonymous", "user", "another user", "task owner", "admin"}[r]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// releaseFixture makes olga an owner of nli, gives its round 1 a verified example, closes it and
// releases it twice: version 1 private, version 2 public.
func releaseFixture(t *testing.T, srv *servertest.Server, alice *dynabench.User, olgaID int64) {
	t.Helper()
	ctx := context.Background()
	adm := admin(t, srv)
	makeOwner(t, srv, "nli", olgaID)
	c, err := srv.Service.PickContext(ctx, alice, "nli", "", "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := srv.Service.CreateExample(ctx, alice, "nli", service.NewExample{ContextID: c.ID,
		Input: map[string]any{"hypothesis": "Something happened.", "label": "entailed"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Service.Validate(ctx, adm, e.ID, service.NewValidation{Label: dynabench.LabelCorrect, Mode: dynabench.ModeOwner}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Service.NextRound(ctx, adm, "nli", nil, ""); err != nil {
		t.Fatal(err)
	}
	for _, public := range []bool{false, true} {
		if _, err := srv.Service.ReleaseRound(ctx, adm, "nli", 1, service.ReleaseRequest{Public: public}); err != nil {
			t.Fatal(err)
		}
	}
}
