package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// scenario is one request and what its answer must hold.
type scenario struct {
	name   string
	as     string // "", or a username logged in for the request
	method string
	path   string
	form   url.Values
	htmx   bool
	status int
	has    []string          // selectors present
	hasNot []string          // selectors absent
	text   []string          // text present
	noText []string          // text absent
	loc    string            // Location prefix
	hxURL  string            // HX-Replace-Url prefix (htmx GETs)
	header map[string]string // answer headers: name → value prefix
}

// pagesFixture starts a server with the sentiment task's model replaced by one that always says
// "positive", users alice (writer) and bob (validator), and alice's fooling example.
func pagesFixture(t *testing.T, engine string) (*servertest.Server, map[string]*visitor) {
	srv := servertest.Start(t, engine)
	ctx := context.Background()
	id := srv.AddModel(t, "sentiment", "always-positive", servertest.Says("positive", "positive", "negative", "neutral"))
	if _, err := srv.Service.SetRoundModels(ctx, admin(t, srv), "sentiment", 1, []int64{id}, ""); err != nil {
		t.Fatal(err)
	}
	failing := srv.AddModel(t, "hs", "down", servertest.Fails(errors.New("connection refused")))
	if _, err := srv.Service.SetRoundModels(ctx, admin(t, srv), "hs", 1, []int64{failing}, ""); err != nil {
		t.Fatal(err)
	}
	srv.User(t, "alice")
	srv.User(t, "bob")
	vs := map[string]*visitor{"": newVisitor(srv),
		"alice": loggedIn(t, srv, "alice", "password-alice"),
		"bob":   loggedIn(t, srv, "bob", "password-bob"),
		"admin": loggedIn(t, srv, "admin", servertest.AdminPassword)}
	return srv, vs
}

func TestPages(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv, vs := pagesFixture(t, engine)
			ctxID := contextOf(t, vs["alice"].follow(t, "/tasks/sentiment/create").Body)
			qaCtx := contextOf(t, vs["alice"].follow(t, "/tasks/qa/create").Body)
			hsCtx := contextOf(t, vs["alice"].follow(t, "/tasks/hs/create").Body)
			in := func(statement, label string) url.Values {
				return url.Values{"context_id": {ctxID}, "in.statement": {statement}, "in.label": {label}}
			}
			scenarios := []scenario{
				{name: "home", method: "GET", path: "/", status: 200,
					has: []string{".task-card", "a[href=/tasks/nli]", "a[href=/login]", "a[href=/register]"}, text: []string{"vMER"}},
				{name: "home logged in", as: "alice", method: "GET", path: "/", status: 200,
					has: []string{"a[href=/profile]"}, hasNot: []string{"a[href=/admin/users]", "a[href=/login]"}},
				{name: "task page", method: "GET", path: "/tasks/nli", status: 200,
					has:    []string{"svg", "#chart-title", "table", "a[href=/tasks/nli/create]", "a[href=/tasks/nli/validate]"},
					hasNot: []string{"a[href=/tasks/nli/settings]"}},
				{name: "task with content warning", method: "GET", path: "/tasks/hs", status: 200, has: []string{".warning"}},
				{name: "task page, owner links for admin", as: "admin", method: "GET", path: "/tasks/nli", status: 200,
					has: []string{"a[href=/tasks/nli/settings]"}},
				{name: "missing task", method: "GET", path: "/tasks/nope", status: 404, has: []string{".error"}},
				{name: "no such page", method: "GET", path: "/nope", status: 404},
				{name: "create asks to log in", method: "GET", path: "/tasks/nli/create", status: 303, loc: "/login?next=%2Ftasks%2Fnli%2Fcreate"},
				{name: "login page", method: "GET", path: "/login", status: 200, has: []string{"input[name=username]", "label[for=password]"}},
				{name: "bad login", method: "POST", path: "/login", form: url.Values{"username": {"alice"}, "password": {"nope-nope"}},
					status: 401, text: []string{"wrong username or password"}, has: []string{"input[value=alice]"}},
				{name: "register problems next to fields", method: "POST", path: "/register",
					form: url.Values{"username": {"x"}, "email": {"not-an-email"}, "password": {"short"}}, status: 422,
					text: []string{"3 to 32 letters", "not a valid email address", "8 to 1024 characters"}, has: []string{"input[value=not-an-email]"}},
				{name: "create page names its context", as: "alice", method: "GET", path: "/tasks/sentiment/create", status: 303,
					loc: "/tasks/sentiment/create?context="},
				{name: "create page", as: "alice", method: "GET", path: "/tasks/sentiment/create?context=" + ctxID, status: 200,
					has: []string{"#create-form", "input[name=in.label]", "textarea[name=in.statement]", "#sandbox", "#next-context",
						"#tag", "#score", "kbd", "[data-draft]", "#result"}},
				{name: "QA create page: selectable passage", as: "alice", method: "GET", path: "/tasks/qa/create?context=" + qaCtx, status: 200,
					has: []string{"[data-select-for=in-answer]", "input[name=in.answer]"}},
				{name: "tag filter with no match", as: "alice", method: "GET", path: "/tasks/sentiment/create?tag=zzz", status: 200,
					text: []string{`no context with tag &#34;zzz&#34;`}},
				{name: "submit: fooled", as: "alice", method: "POST", path: "/tasks/sentiment/create", htmx: true,
					form: in("What a dreadful, boring film.", "negative"), status: 200,
					has:    []string{"#verdict", ".verdict-fooled", ".bar-pred", "textarea[name=meta.model_explanation_wrong]", "#score"},
					hasNot: []string{"textarea[name=meta.model_explanation_right]", "#create-form"},
					text:   []string{"You fooled the model!", "positive"}},
				{name: "submit: not fooled", as: "alice", method: "POST", path: "/tasks/sentiment/create", htmx: true,
					form: in("A lovely film.", "positive"), status: 200,
					has: []string{".verdict-right", "textarea[name=meta.model_explanation_right]"}, text: []string{"The model got it right."}},
				{name: "submit: sandbox stores nothing", as: "alice", method: "POST", path: "/tasks/sentiment/create", htmx: true,
					form: func() url.Values { f := in("Try this.", "negative"); f.Set("sandbox", "1"); return f }(), status: 200,
					text: []string{"nothing was stored"}, hasNot: []string{"form.explain"}},
				{name: "submit: missing text, htmx", as: "alice", method: "POST", path: "/tasks/sentiment/create", htmx: true,
					form: in("", "negative"), status: 422, hasNot: []string{"#verdict"},
					text: []string{`id="err-in-statement" hx-swap-oob="true" role="alert">required`}},
				{name: "submit: bad label, no JavaScript keeps the text", as: "alice", method: "POST", path: "/tasks/sentiment/create",
					form: in("Keep this text please", "maybe"), status: 422, has: []string{"#create-form"},
					text: []string{">Keep this text please</textarea>", "maybe"}},
				{name: "submit: model down, example kept", as: "alice", method: "POST", path: "/tasks/hs/create", htmx: true,
					form: url.Values{"context_id": {hsCtx}, "in.statement": {"A statement."}, "in.label": {"not-hateful"}}, status: 200,
					has: []string{".verdict-error"}, text: []string{"The model could not answer", "saved anyway"}},
				{name: "validate: model answer hidden", as: "bob", method: "GET", path: "/tasks/sentiment/validate", status: 200,
					has: []string{"input[value=correct]", "input[value=incorrect]", "input[value=flagged]", "textarea[name=meta.flag_reason]",
						"[data-when=incorrect]"}, hasNot: []string{"#verdict", "#mode"}, noText: []string{"always-positive"}},
				{name: "validate: nothing left for the writer", as: "alice", method: "GET", path: "/tasks/nli/validate", status: 200,
					has: []string{"#nothing-left"}},
				{name: "profile", as: "alice", method: "GET", path: "/profile", status: 200,
					has: []string{"#token-name"}, text: []string{"sentiment"}},
				{name: "token shown once", as: "alice", method: "POST", path: "/profile/tokens", form: url.Values{"name": {"laptop"}},
					status: 200, has: []string{"#new-token"}, text: []string{"dbk_"}},
				{name: "settings page", as: "admin", method: "GET", path: "/tasks/nli/settings", status: 200,
					has: []string{"textarea[name=config]", "#nmv", "#strategy"}},
				{name: "broken config: every problem by path", as: "admin", method: "POST", path: "/tasks/nli/config",
					form: url.Values{"config": {"input:\n- name: hypothesis\n  type: strnig\n"}}, status: 422,
					has: []string{"#config-problems", ".path"}, text: []string{"config.input[0].type", "strnig"}},
				{name: "contexts: first bad line named", as: "admin", method: "POST", path: "/tasks/nli/contexts",
					form: url.Values{"round": {"1"}, "jsonl": {`{"context":{"context":"ok"}}` + "\n" + `{"context":{}}`}}, status: 422,
					text: []string{"line 2", "Nothing was stored"}},
				{name: "contexts: upload", as: "admin", method: "POST", path: "/tasks/nli/contexts",
					form: url.Values{"round": {"1"}, "jsonl": {`{"context":{"context":"A new premise."},"tag":"new"}`}}, status: 303,
					loc: "/tasks/nli/contexts?saved=1+contexts"},
				{name: "rounds page", as: "admin", method: "GET", path: "/tasks/nli/rounds", status: 200, has: []string{"input[name=model]", "#next-mode"}},
				{name: "flagged page", as: "admin", method: "GET", path: "/tasks/nli/flagged", status: 200, has: []string{"#no-flagged"}},
				{name: "admin users", as: "admin", method: "GET", path: "/admin/users", status: 200, text: []string{"alice", "Make admin"}},
			}
			scenarios = append(scenarios, evalScenarios(t, srv)...)
			scenarios = append(scenarios, releaseScenarios(t, srv)...)
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) { runScenario(t, vs[sc.as], sc) })
			}
			srv.NoDrift(t)
		})
	}
}

func runScenario(t *testing.T, v *visitor, sc scenario) {
	t.Helper()
	var p *page
	if sc.method == http.MethodGet && sc.htmx {
		req, _ := http.NewRequest(http.MethodGet, v.srv.URL+sc.path, nil)
		req.Header.Set("HX-Request", "true")
		p = v.do(t, req)
	} else if sc.method == http.MethodGet {
		p = v.get(t, sc.path)
	} else {
		h := http.Header{}
		if sc.htmx {
			h.Set("HX-Request", "true")
		}
		p = v.postWith(t, sc.path, sc.form, h)
	}
	if p.Status != sc.status {
		t.Fatalf("%s %s: status %d, want %d\n%s", sc.method, sc.path, p.Status, sc.status, p.Body)
	}
	if got := p.Header.Get("HX-Replace-Url"); sc.hxURL != "" && !strings.HasPrefix(got, sc.hxURL) {
		t.Errorf("HX-Replace-Url %q, want prefix %q", got, sc.hxURL)
	}
	for k, want := range sc.header {
		if got := p.Header.Get(k); !strings.HasPrefix(got, want) {
			t.Errorf("%s %s: %s %q, want prefix %q", sc.method, sc.path, k, got, want)
		}
	}
	if sc.loc != "" && !strings.HasPrefix(p.Location, sc.loc) {
		t.Errorf("Location %q, want prefix %q", p.Location, sc.loc)
	}
	for _, s := range sc.has {
		if !has(p.Body, s) {
			t.Errorf("%s %s: no %s in\n%s", sc.method, sc.path, s, p.Body)
		}
	}
	for _, s := range sc.hasNot {
		if has(p.Body, s) {
			t.Errorf("%s %s: unexpected %s", sc.method, sc.path, s)
		}
	}
	for _, s := range sc.text {
		if !strings.Contains(p.Body, s) {
			t.Errorf("%s %s: no text %q in\n%s", sc.method, sc.path, s, p.Body)
		}
	}
	for _, s := range sc.noText {
		if strings.Contains(p.Body, s) {
			t.Errorf("%s %s: unexpected text %q", sc.method, sc.path, s)
		}
	}
	if p.Status < 300 || p.Status >= 400 {
		if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("Content-Security-Policy %q", csp)
		}
	}
}

// The session cookie is HttpOnly and SameSite=Lax, and logging out revokes the token.
func TestSessionCookie(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, "sqlite", servertest.NoDemo)
	srv.User(t, "carol")
	v := newVisitor(srv)
	p := v.post(t, "/login", url.Values{"username": {"carol"}, "password": {"password-carol"}})
	cookie := p.Header.Get("Set-Cookie")
	for _, want := range []string{"dynabench_session=dbk_", "HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", cookie, want)
		}
	}
	token := strings.TrimPrefix(strings.Split(cookie, ";")[0], "dynabench_session=")
	if _, err := srv.Service.Authenticate(context.Background(), token); err != nil {
		t.Fatalf("session token: %v", err)
	}
	if p := v.post(t, "/logout", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("logout: %d", p.Status)
	}
	if _, err := srv.Service.Authenticate(context.Background(), token); !dynabench.IsCode(err, dynabench.EUNAUTHORIZED) {
		t.Errorf("the session token still works after logout: %v", err)
	}
	if p := v.get(t, "/profile"); p.Status != http.StatusSeeOther {
		t.Errorf("profile after logout: %d", p.Status)
	}
	// A cross-site form post is refused.
	v2 := loggedIn(t, srv, "carol", "password-carol")
	p = v2.postWith(t, "/profile/tokens", url.Values{"name": {"x"}}, http.Header{"Sec-Fetch-Site": {"cross-site"}})
	if p.Status != http.StatusForbidden {
		t.Errorf("cross-site post: %d", p.Status)
	}
	// Static files are fingerprinted, cached for a year and gzipped.
	home := v2.get(t, "/").Body
	i := strings.Index(home, "/static/htmx.min.")
	if i < 0 {
		t.Fatal("no htmx script in the page")
	}
	src := home[i : i+strings.Index(home[i:], `"`)]
	req, _ := http.NewRequest(http.MethodGet, srv.URL+src, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	a := v2.do(t, req)
	if a.Status != 200 || a.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(a.Header.Get("Cache-Control"), "immutable") {
		t.Errorf("asset %s: %d %v", src, a.Status, a.Header)
	}
}
