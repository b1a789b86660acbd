package api_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
)

// The roles of the authorization matrix, in column order.
const (
	roleAnon  = iota // no token
	roleUser         // alice: wrote the example, holds the extra token, registered the unpublished model
	roleOther        // bob: owns and wrote nothing
	roleOwner        // owner: an owner of task t1 (not an admin)
	roleAdmin        // the bootstrap admin
	numRoles
)

var roleNames = [numRoles]string{"anonymous", "user", "another user", "task owner", "admin"}

// authzRow is what each role gets from one route, on the fixtures of authzFixture.
type authzRow struct {
	// want is the status per role: anonymous, user (alice), another user (bob), task owner, admin.
	want [numRoles]int
	// phase orders the rows within a role's run: rows that change state others depend on go later.
	phase int
	// id names the fixture that fills {id}: "token", "user", "example", "failed", "model".
	id string
	// body returns a valid body for the route (nil: none).
	body func(f *authzFixture, role int) any
	// note says why a status is what it is, where it is not obvious.
	note string
	// query is appended to the path.
	query string
}

// authzMatrix is the expected status of every route for every role. TestAuthzMatrix fails for a
// route the server serves that has no row here, and for a row whose route is not served.
var authzMatrix = map[string]authzRow{
	// Operations: anyone.
	"GET /healthz":                 {want: all(200)},
	"GET /readyz":                  {want: all(200)},
	"GET /metrics":                 {want: all(200)},
	"GET /api/v1/openapi.json":     {want: all(200)},
	"GET /api/v1/docs":             {want: all(200)},
	"GET /api/v1/schemas/{schema}": {want: all(200)},

	// Accounts.
	"POST /api/v1/auth/register": {want: all(201), body: func(_ *authzFixture, role int) any {
		name := fmt.Sprintf("newcomer%d", role)
		return map[string]any{"username": name, "email": name + "@example.com", "password": "password-" + name}
	}},
	"POST /api/v1/auth/login": {want: all(200), body: func(*authzFixture, int) any {
		return map[string]any{"username": "alice", "password": "password-alice"}
	}},
	"GET /api/v1/me":        {want: users(200)},
	"GET /api/v1/me/tokens": {want: users(200)},
	"POST /api/v1/me/tokens": {want: users(201), body: func(*authzFixture, int) any {
		return map[string]any{"name": "matrix"}
	}},
	// Only one's own tokens: the id is alice's second token.
	"DELETE /api/v1/me/tokens/{id}": {want: [numRoles]int{401, 204, 404, 404, 404}, id: "token", phase: 2,
		note: "/me is the caller's own: not even an admin revokes another's token here"},
	"GET /api/v1/users": {want: adminOnly(200)},
	"PUT /api/v1/users/{id}/role": {want: adminOnly(204), id: "user", body: func(*authzFixture, int) any {
		return map[string]any{"admin": false}
	}},

	// Tasks and rounds.
	"GET /api/v1/tasks": {want: all(200)},
	"POST /api/v1/tasks": {want: adminOnly(201), body: func(_ *authzFixture, role int) any {
		return map[string]any{"code": fmt.Sprintf("new%d", role), "name": "New", "config": sentimentConfig}
	}},
	"GET /api/v1/tasks/{code}": {want: all(200)},
	"PUT /api/v1/tasks/{code}/config": {want: ownerOnly(200), body: func(*authzFixture, int) any {
		return map[string]any{"config": sentimentConfig}
	}},
	"PUT /api/v1/tasks/{code}/settings": {want: ownerOnly(200), body: func(*authzFixture, int) any {
		return authzSettings(false)
	}},
	"GET /api/v1/tasks/{code}/rounds":     {want: all(200)},
	"GET /api/v1/tasks/{code}/rounds/{n}": {want: all(200)},
	// Closes round 1: last, so that the rows about round 1 see it open.
	"POST /api/v1/tasks/{code}/rounds": {want: ownerOnly(201), phase: 3, body: func(*authzFixture, int) any {
		return map[string]any{"models": []string{}}
	}},
	"PUT /api/v1/tasks/{code}/rounds/{n}/models": {want: ownerOnly(200), body: func(f *authzFixture, _ int) any {
		return map[string]any{"models": []string{f.loopModel}}
	}},
	"POST /api/v1/tasks/{code}/rounds/{n}/contexts": {want: ownerOnly(201), body: func(*authzFixture, int) any {
		return servertest.Raw{ContentType: "application/x-ndjson", Body: []byte(`{"context":{"context":"One more."},"tag":"more"}` + "\n")}
	}},
	"GET /api/v1/tasks/{code}/context": {want: users(200)},

	// Examples and validations.
	"POST /api/v1/tasks/{code}/examples": {want: users(201), body: func(f *authzFixture, _ int) any {
		return map[string]any{"context_id": f.contextID, "input": map[string]any{"statement": "Not great.", "label": "negative"}}
	}},
	// The example is alice's: the task's owners and admins see it, others are told it does not exist.
	"GET /api/v1/examples/{id}": {want: [numRoles]int{401, 200, 404, 200, 200}, id: "example"},
	// Creator only; to anyone else the example does not exist (changeOwnExample).
	"PATCH /api/v1/examples/{id}": {want: creatorOnly(200), id: "example", phase: 1, body: func(*authzFixture, int) any {
		return map[string]any{"metadata": map[string]any{"example_explanation": "Sarcasm."}}
	}},
	"POST /api/v1/examples/{id}/flag": {want: creatorOnly(200), id: "example", phase: 1, body: func(*authzFixture, int) any {
		return map[string]any{"reason": "typo"}
	}},
	"POST /api/v1/examples/{id}/retract": {want: creatorOnly(200), id: "example", phase: 2},
	// Any user but the creator (403 for one's own example); owners and admins may vote as users.
	"POST /api/v1/examples/{id}/validations": {want: [numRoles]int{401, 403, 201, 201, 201}, id: "example", phase: 1,
		body: func(*authzFixture, int) any { return map[string]any{"label": "correct"} }},
	// Alice's own example is never due to her: 204; to everyone else it is.
	"GET /api/v1/tasks/{code}/validations/next": {want: [numRoles]int{401, 204, 200, 200, 200}},
	"GET /api/v1/tasks/{code}/annotators":       {want: all(200)},
	// The example whose model failed: its creator, the task's owners and admins.
	"POST /api/v1/examples/{id}/rescore": {want: [numRoles]int{401, 200, 404, 200, 200}, id: "failed"},

	// Models.
	"GET /api/v1/tasks/{code}/models": {want: all(200)},
	"POST /api/v1/tasks/{code}/models": {want: users(201), body: func(_ *authzFixture, role int) any {
		return map[string]any{"name": fmt.Sprintf("m%d", role), "kind": "dynalab", "url": "http://127.0.0.1:9/"}
	}},
	// Alice's unpublished model: its registrant, the task's owners and admins.
	"GET /api/v1/models/{id}": {want: [numRoles]int{404, 200, 404, 200, 200}, id: "model"},
	// t1 has no seed set and no verified examples: an owner passes authorization and gets 422.
	"POST /api/v1/tasks/{code}/models/train": {want: ownerOnly(422), body: func(*authzFixture, int) any {
		return map[string]any{"name": "trained"}
	}, note: "422 = authorized, then refused for lack of training data"},

	// Datasets, evaluation and leaderboards.
	"POST /api/v1/tasks/{code}/datasets": {want: ownerOnly(201), query: "?name=extra&access=standard", body: func(*authzFixture, int) any {
		return servertest.Raw{ContentType: "application/x-ndjson", Body: []byte(`{"uid":"x1","context":"c","statement":"Fine.","label":"positive"}` + "\n")}
	}},
	"GET /api/v1/tasks/{code}/datasets": {want: all(200)},
	// Deletes the dataset the other rows read: last.
	"DELETE /api/v1/tasks/{code}/datasets/{name}": {want: ownerOnly(204), phase: 3},
	// Alice's unpublished model: its registrant, the task's owners and admins may re-queue it...
	"POST /api/v1/models/{id}/evaluate": {want: [numRoles]int{401, 202, 404, 202, 202}, id: "model"},
	// ...but only its registrant (and admins) publish it; the task's owner sees it and is refused.
	"POST /api/v1/models/{id}/publish":     {want: [numRoles]int{401, 200, 404, 403, 200}, id: "model", phase: 2},
	"GET /api/v1/tasks/{code}/leaderboard": {want: all(200)},
	"POST /api/v1/tasks/{code}/leaderboard/forks": {want: users(201), body: func(*authzFixture, int) any {
		return map[string]any{"name": "mine", "metric_weights": map[string]any{"macro_f1": 1}}
	}},
	"GET /api/v1/tasks/{code}/leaderboard/forks/{slug}": {want: all(200), id: "fork"},
	"POST /api/v1/tasks/{code}/leaderboard/snapshots": {want: ownerOnly(201), body: func(*authzFixture, int) any {
		return map[string]any{"name": "frozen"}
	}},
	"GET /api/v1/tasks/{code}/leaderboard/snapshots/{slug}": {want: all(200), id: "snapshot"},
	// Both models must be visible to the caller: alice's unpublished model is not, to bob.
	"GET /api/v1/compare": {want: [numRoles]int{404, 200, 404, 200, 200}, id: "model", query: "?a={id}&b={id}"},

	// Releases. Round 1 is open in these rows: owners pass authorization and are told to close it.
	"POST /api/v1/tasks/{code}/rounds/{n}/release": {want: ownerOnly(409), note: "409 = authorized, round still open"},
	"GET /api/v1/tasks/{code}/rounds/{n}/export":   {want: ownerOnly(409), query: "?format=csv", note: "409 = authorized, round still open"},
	"GET /api/v1/tasks/{code}/releases":            {want: all(200)},
	"GET /api/v1/tasks/{code}/cycle":               {want: all(200)},
	// The job is queued, not run: the fixture has no in-process workers.
	"POST /api/v1/tasks/{code}/rounds/cycle": {want: ownerOnly(202), body: func(*authzFixture, int) any {
		return map[string]any{"retrain": true}
	}},
	// Alice's model's evaluation job: hers, and the task's owners'.
	"GET /api/v1/jobs/{id}": {want: [numRoles]int{401, 200, 404, 200, 200}, id: "job"},
	"PUT /api/v1/tasks/{code}/rounds/{n}/releases/{version}/public": {want: [numRoles]int{401, 403, 403, 404, 404}, body: func(*authzFixture, int) any {
		return map[string]any{"public": true}
	}, note: "owners pass authorization and find no release in the fixture"},
	"GET /api/v1/tasks/{code}/rounds/{n}/releases/{version}/file": {want: all(404), query: "?path=manifest.json", note: "no release exists in the fixture; TestReleaseCycle covers the files"},
	"POST /api/v1/tasks/{code}/import": {want: ownerOnly(201), query: "?format=dynasent&name=dynasent-r1", body: func(*authzFixture, int) any {
		return servertest.Raw{ContentType: "application/x-ndjson", Body: []byte(`{"text_id":"d1","sentence":"Nice.","gold_label":"positive"}` + "\n")}
	}},

	// The worker protocol. The fixture runs no in-process worker, so alice's job waits to be leased:
	// by her worker (her model's job) or an admin's; nobody else has a job.
	"POST /api/v1/jobs/lease": {want: [numRoles]int{401, 200, 204, 204, 200}, body: func(*authzFixture, int) any {
		return map[string]any{"worker": "matrix"}
	}},
	// Reports under a lease that is not the job's: authorized callers are told it is lost (409).
	"POST /api/v1/jobs/{id}/heartbeat": {want: [numRoles]int{401, 409, 404, 404, 409}, id: "job", body: func(*authzFixture, int) any {
		return map[string]any{"lease": "not-the-lease"}
	}},
	"POST /api/v1/jobs/{id}/complete": {want: [numRoles]int{401, 409, 404, 404, 409}, id: "job", body: func(*authzFixture, int) any {
		return map[string]any{"lease": "not-the-lease", "report": map[string]any{"dataset_version": 1, "outputs": []any{}}}
	}},
	"POST /api/v1/jobs/{id}/fail": {want: [numRoles]int{401, 409, 404, 404, 409}, id: "job", body: func(*authzFixture, int) any {
		return map[string]any{"lease": "not-the-lease", "failure": map[string]any{"reason": "x", "fault": "platform"}}
	}},
}

// knownBugs are checks where the server is known to answer wrongly, keyed by the check's name
// ("METHOD /path as role" in the matrix, the check's name in TestAuthzIDOR): they are logged
// instead of failing until fixed, and fail once fixed so that the entry is removed. Each value
// says what the server does instead.
var knownBugs = map[string]string{}

func all(s int) [numRoles]int { return [numRoles]int{s, s, s, s, s} }

// users: any signed-in user.
func users(s int) [numRoles]int { return [numRoles]int{401, s, s, s, s} }

// ownerOnly: the task's owners and admins.
func ownerOnly(s int) [numRoles]int { return [numRoles]int{401, 403, 403, s, s} }

// adminOnly: admins.
func adminOnly(s int) [numRoles]int { return [numRoles]int{401, 403, 403, 403, s} }

// creatorOnly: the example's creator (alice); to anyone else it does not exist.
func creatorOnly(s int) [numRoles]int { return [numRoles]int{401, s, 404, 404, 404} }

func authzSettings(hidden bool) map[string]any {
	return map[string]any{"num_matching_validations": 3, "context_strategy": "least_used", "max_examples_per_day": 0,
		"validate_non_fooling": false, "hidden": hidden, "model_timeout_ms": 5000}
}

// authzFixture is one server with task t1 owned by "owner", a context in round 1, an example of
// alice's (and one whose model failed), a second token of alice's and an unpublished model of hers.
type authzFixture struct {
	*servertest.Server
	tokens    [numRoles]string
	ids       map[string]string // fixtures for {id}
	contextID string
	loopModel string
}

func newAuthzFixture(t *testing.T) *authzFixture {
	t.Helper()
	srv := servertest.Start(t, enginesFirst(), servertest.NoDemo, servertest.NoWorkers)
	f := &authzFixture{Server: srv, ids: map[string]string{}}
	owner, alice, bob := srv.User(t, "owner"), srv.User(t, "alice"), srv.User(t, "bob")
	f.tokens = [numRoles]string{"", alice.Token, bob.Token, owner.Token, srv.AdminToken}
	must := func(want int, method, path, token string, body any) *servertest.Response {
		t.Helper()
		r := srv.Do(t, method, path, token, body)
		if r.Status != want {
			t.Fatalf("fixture: %s %s: %d, want %d: %s", method, path, r.Status, want, r.Body)
		}
		return r
	}

	must(201, "POST", "/api/v1/tasks", srv.AdminToken, map[string]any{"code": "t1", "name": "Task t1", "config": sentimentConfig})
	if err := srv.Service.Store.AddTaskOwner(context.Background(), srv.Task(t, "t1").ID, owner.ID); err != nil {
		t.Fatal(err)
	}
	// The model in the loop fails while fail is set: for an example to rescore.
	var fail atomic.Bool
	fake := servertest.Says("positive", sentimentLabels...)
	out := fake.Output
	fake.Answer = func(context.Context, map[string]any) (map[string]any, error) {
		if fail.Load() {
			return nil, fmt.Errorf("model down")
		}
		return out, nil
	}
	f.loopModel = fmt.Sprint(srv.AddModel(t, "t1", "t1-fake", fake))
	must(200, "PUT", "/api/v1/tasks/t1/rounds/1/models", owner.Token, map[string]any{"models": []string{f.loopModel}})
	must(201, "POST", "/api/v1/tasks/t1/rounds/1/contexts", owner.Token, servertest.Raw{ContentType: "application/x-ndjson",
		Body: []byte(`{"context":{"context":"A first context."},"tag":"c1"}` + "\n" + `{"context":{"context":"A second."},"tag":"c2"}` + "\n")})
	f.contextID = must(200, "GET", "/api/v1/tasks/t1/context", alice.Token, nil).String("id")

	example := func() *servertest.Response {
		return must(201, "POST", "/api/v1/tasks/t1/examples", alice.Token,
			map[string]any{"context_id": f.contextID, "input": map[string]any{"statement": "What a delight, said nobody.", "label": "negative"}})
	}
	f.ids["example"] = example().String("example.id")
	fail.Store(true)
	r := example()
	fail.Store(false)
	if r.String("example.model_error") == "" {
		t.Fatalf("fixture: the failing model's example has no model_error: %s", r.Body)
	}
	f.ids["failed"] = r.String("example.id")
	f.ids["token"] = must(201, "POST", "/api/v1/me/tokens", alice.Token, map[string]any{"name": "second"}).String("id")
	f.ids["model"] = must(201, "POST", "/api/v1/tasks/t1/models", alice.Token,
		map[string]any{"name": "alice-model", "kind": "dynalab", "url": "http://127.0.0.1:9/"}).String("id")
	f.ids["user"] = fmt.Sprint(bob.ID)
	must(201, "POST", "/api/v1/tasks/t1/datasets?name=dev", owner.Token, servertest.Raw{ContentType: "application/x-ndjson",
		Body: []byte(`{"uid":"d1","context":"c","statement":"Lovely.","label":"positive"}` + "\n")})
	f.ids["fork"] = must(201, "POST", "/api/v1/tasks/t1/leaderboard/forks", bob.Token, map[string]any{"name": "bob's"}).String("slug")
	f.ids["snapshot"] = must(201, "POST", "/api/v1/tasks/t1/leaderboard/snapshots", owner.Token, map[string]any{"name": "s"}).String("slug")
	modelID, _ := strconv.ParseInt(f.ids["model"], 10, 64)
	evs, err := srv.Service.Store.FindEvaluations(context.Background(), dynabench.EvaluationFilter{ModelID: modelID})
	if err != nil || len(evs) == 0 {
		t.Fatalf("fixture: alice's model has no evaluation queued: %v", err)
	}
	job, err := srv.Service.Store.FindJobByKey(context.Background(), fmt.Sprintf("evaluate:%d", evs[0].ID))
	if err != nil {
		t.Fatalf("fixture: alice's model has no job: %v", err)
	}
	f.ids["job"] = fmt.Sprint(job.ID)
	return f
}

// path fills a route's parameters with the fixtures.
func (f *authzFixture) path(t *testing.T, route string, row authzRow) string {
	t.Helper()
	_, path, _ := strings.Cut(route, " ")
	path += row.query
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllStringFunc(path, func(p string) string {
		switch p {
		case "{code}":
			return "t1"
		case "{n}":
			return "1"
		case "{schema}":
			return "ErrorModel"
		case "{name}":
			return "dev"
		case "{version}":
			return "1"
		case "{slug}":
			return f.ids[row.id]
		case "{id}":
			id, ok := f.ids[row.id]
			if !ok {
				t.Fatalf("%s: no fixture %q for {id}", route, row.id)
			}
			return id
		}
		t.Fatalf("%s: no fixture for %s", route, p)
		return ""
	})
}

// servedRoutes lists every route: the OpenAPI document's operations and the registrations in the
// source (so that an undocumented route is not missed either).
func servedRoutes(t *testing.T, srv *servertest.Server) []string {
	t.Helper()
	r := srv.Do(t, "GET", "/api/v1/openapi.json", "", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("openapi.json: %d", r.Status)
	}
	paths, _ := r.JSON.(map[string]any)["paths"].(map[string]any)
	var routes []string
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method := range ops {
			switch m := strings.ToUpper(method); m {
			case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS":
				routes = append(routes, m+" "+path)
			}
		}
	}
	if len(routes) < 20 {
		t.Fatalf("only %d operations in the OpenAPI document", len(routes))
	}
	for _, route := range sourceRoutes(t, "..") {
		if !slices.Contains(routes, route) {
			routes = append(routes, route)
		}
	}
	// huma's own routes are served though not documented.
	for _, route := range []string{"GET /api/v1/openapi.json", "GET /api/v1/docs", "GET /api/v1/schemas/{schema}"} {
		method, path, _ := strings.Cut(route, " ")
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		if _, pattern := srv.API.Mux().Handler(req); pattern != "" && !strings.HasPrefix(pattern, "/") && !slices.Contains(routes, route) {
			routes = append(routes, route)
		}
	}
	sort.Strings(routes)
	return routes
}

// TestAuthzMatrix: every route × {anonymous, user, another user, task owner, admin} gets the status
// the authorization rules (API.md's "who" column) give it. Each role runs on its own server with
// the same fixtures, so that a mutating request of one role changes nothing another role sees.
func TestAuthzMatrix(t *testing.T) {
	t.Parallel()
	// The route list comes from a server of its own, so that a route missing from the table fails
	// before anything else runs.
	probe := servertest.Start(t, enginesFirst(), servertest.NoDemo)
	routes := servedRoutes(t, probe)
	for _, route := range routes {
		if _, ok := authzMatrix[route]; !ok {
			t.Errorf("route %s has no authorization expectation in authzMatrix", route)
		}
	}
	for route := range authzMatrix {
		if !slices.Contains(routes, route) {
			t.Errorf("authzMatrix has a row for %s, which is not served", route)
		}
	}
	if t.Failed() {
		return
	}
	// Rows in phase order, then by route, for a stable run.
	ordered := slices.Clone(routes)
	sort.SliceStable(ordered, func(i, j int) bool { return authzMatrix[ordered[i]].phase < authzMatrix[ordered[j]].phase })

	for role := range numRoles {
		t.Run(roleNames[role], func(t *testing.T) {
			t.Parallel()
			f := newAuthzFixture(t)
			for _, route := range ordered {
				row := authzMatrix[route]
				method, _, _ := strings.Cut(route, " ")
				path := f.path(t, route, row)
				var body any
				if row.body != nil {
					body = row.body(f, role)
				}
				r := f.Do(t, method, path, f.tokens[role], body)
				want := row.want[role]
				authzVerdict(t, route+" as "+roleNames[role], path, r, want)
			}
		})
	}
}

// authzVerdict fails t when r's status is not want, unless the cell is a known bug (then it logs);
// a known bug that no longer shows fails too, so that knownBugs stays true.
func authzVerdict(t *testing.T, cell, path string, r *servertest.Response, want int) {
	t.Helper()
	bug, known := knownBugs[cell]
	switch {
	case r.Status == want && known:
		t.Errorf("%s: known bug (%s) is fixed: remove it from knownBugs", cell, bug)
	case r.Status == want:
	case known:
		t.Logf("KNOWN BUG %s (%s): got %d, want %d (%s): %s", cell, path, r.Status, want, bug, clip(r.Body))
	default:
		t.Errorf("%s (%s): got %d, want %d: %s", cell, path, r.Status, want, clip(r.Body))
	}
}

// TestAuthzIDOR: what one user cannot see of another's, and a hidden task.
func TestAuthzIDOR(t *testing.T) {
	t.Parallel()
	f := newAuthzFixture(t)
	anon, alice, bob, owner, admin := f.tokens[roleAnon], f.tokens[roleUser], f.tokens[roleOther], f.tokens[roleOwner], f.tokens[roleAdmin]
	check := func(name string, want int, method, path, token string, body any) {
		t.Helper()
		authzVerdict(t, name, method+" "+path, f.Do(t, method, path, token, body), want)
	}
	model, example, failed := f.ids["model"], f.ids["example"], f.ids["failed"]

	// An unpublished model is not listed to others, and does not exist for them.
	check("unpublished model, bob", 404, "GET", "/api/v1/models/"+model, bob, nil)
	check("unpublished model, anonymous", 404, "GET", "/api/v1/models/"+model, anon, nil)
	check("unpublished model, alice", 200, "GET", "/api/v1/models/"+model, alice, nil)
	r := f.Do(t, "GET", "/api/v1/tasks/t1/models", bob, nil)
	if strings.Contains(string(r.Body), "alice-model") {
		t.Errorf("bob's list of t1's models shows alice's unpublished model: %s", clip(r.Body))
	}
	// A missing model and another's unpublished one look the same.
	check("missing model, bob", 404, "GET", "/api/v1/models/999999", bob, nil)

	// Other users' examples do not exist for bob, whatever he tries.
	for _, id := range []string{example, failed} {
		check("other's example, GET", 404, "GET", "/api/v1/examples/"+id, bob, nil)
		check("other's example, PATCH", 404, "PATCH", "/api/v1/examples/"+id, bob, map[string]any{"metadata": map[string]any{"example_explanation": "x"}})
		check("other's example, flag", 404, "POST", "/api/v1/examples/"+id+"/flag", bob, map[string]any{"reason": "x"})
		check("other's example, retract", 404, "POST", "/api/v1/examples/"+id+"/retract", bob, nil)
	}
	check("other's example, rescore", 404, "POST", "/api/v1/examples/"+failed+"/rescore", bob, nil)
	check("missing example, bob", 404, "GET", "/api/v1/examples/999999", bob, nil)
	// Owner mode is for owners only.
	check("owner-mode validation by bob", 403, "POST", "/api/v1/examples/"+example+"/validations", bob,
		map[string]any{"label": "correct", "mode": "owner"})
	check("owner-mode validation by the owner", 201, "POST", "/api/v1/examples/"+example+"/validations", owner,
		map[string]any{"label": "correct", "mode": "owner"})
	// Another's token cannot be revoked; it still works afterwards.
	check("alice's token, bob", 404, "DELETE", "/api/v1/me/tokens/"+f.ids["token"], bob, nil)
	check("alice's token, admin", 404, "DELETE", "/api/v1/me/tokens/"+f.ids["token"], admin, nil)
	check("alice's token, alice", 204, "DELETE", "/api/v1/me/tokens/"+f.ids["token"], alice, nil)
	check("alice's token again", 404, "DELETE", "/api/v1/me/tokens/"+f.ids["token"], alice, nil)

	// A hidden task does not exist for anyone but its owners and admins.
	check("hide t1", 200, "PUT", "/api/v1/tasks/t1/settings", owner, authzSettings(true))
	for _, c := range []struct {
		who   string
		token string
		want  int
	}{{"anonymous", anon, 404}, {"alice", alice, 404}, {"bob", bob, 404}, {"owner", owner, 200}, {"admin", admin, 200}} {
		check("hidden task, "+c.who, c.want, "GET", "/api/v1/tasks/t1", c.token, nil)
		check("hidden task rounds, "+c.who, c.want, "GET", "/api/v1/tasks/t1/rounds/1", c.token, nil)
		check("hidden task models, "+c.who, c.want, "GET", "/api/v1/tasks/t1/models", c.token, nil)
		check("hidden task annotators, "+c.who, c.want, "GET", "/api/v1/tasks/t1/annotators", c.token, nil)
		r := f.Do(t, "GET", "/api/v1/tasks", c.token, nil)
		if listed := strings.Contains(string(r.Body), `"t1"`); listed != (c.want == 200) {
			t.Errorf("hidden task in GET /api/v1/tasks for %s: listed %v, want %v", c.who, listed, c.want == 200)
		}
	}
	// Signed-in non-owners cannot write on it either, and are not told it exists.
	check("hidden task context, bob", 404, "GET", "/api/v1/tasks/t1/context", bob, nil)
	check("hidden task example, bob", 404, "POST", "/api/v1/tasks/t1/examples", bob,
		map[string]any{"context_id": f.contextID, "input": map[string]any{"statement": "x", "label": "negative"}})
	check("hidden task validations, bob", 404, "GET", "/api/v1/tasks/t1/validations/next", bob, nil)
	check("hidden task model registration, bob", 404, "POST", "/api/v1/tasks/t1/models", bob,
		map[string]any{"name": "bobs", "kind": "dynalab", "url": "http://127.0.0.1:9/"})
	// Nor do its owner-only routes answer 403 (which would tell a hidden task from a missing one).
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"PUT", "/api/v1/tasks/t1/config", map[string]any{"config": sentimentConfig}},
		{"PUT", "/api/v1/tasks/t1/settings", authzSettings(true)},
		{"POST", "/api/v1/tasks/t1/rounds", map[string]any{"models": []string{}}},
		{"PUT", "/api/v1/tasks/t1/rounds/1/models", map[string]any{"models": []string{f.loopModel}}},
		{"POST", "/api/v1/tasks/t1/rounds/1/contexts", servertest.Raw{ContentType: "application/x-ndjson", Body: []byte(`{"context":{"context":"x"}}` + "\n")}},
		{"POST", "/api/v1/tasks/t1/models/train", map[string]any{"name": "x"}},
	} {
		check("hidden task, owner-only "+c.method+" "+c.path+", bob", 404, c.method, c.path, bob, c.body)
		check("missing task, owner-only "+c.method+" "+c.path+", bob", 404, c.method, strings.Replace(c.path, "/t1/", "/nope/", 1), bob, c.body)
		check("hidden task, owner-only "+c.method+" "+c.path+", anonymous", 401, c.method, c.path, anon, c.body)
	}
	// Its examples cannot be validated by those who cannot see it.
	check("hidden task, validate its example, bob", 404, "POST", "/api/v1/examples/"+f.ids["failed"]+"/validations", bob,
		map[string]any{"label": "correct"})
	// The creator still sees her own example.
	check("hidden task, own example, alice", 200, "GET", "/api/v1/examples/"+example, alice, nil)

	// A token that belongs to no one is refused, also on public routes.
	check("bad token, /me", 401, "GET", "/api/v1/me", badToken, nil)
	check("bad token, tasks", 401, "GET", "/api/v1/tasks", badToken, nil)
}
