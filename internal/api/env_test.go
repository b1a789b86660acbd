package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// sentimentConfig is a small exact_match task: the model is fooled when its label differs from the
// annotator's.
const sentimentConfig = `
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
- name: prob
  type: prob
  reference_name: label
model_wrong_metric:
  type: exact_match
  reference_names: [label]
perf_metric:
  type: macro_f1
  reference_name: label
aggregation_metric:
  type: dynascore
metadata:
  create:
  - name: example_explanation
    type: string
  - name: model_explanation_wrong
    type: string
    model_wrong_condition: true
  validate:
  - name: corrected_label
    type: multiclass
    labels: [positive, negative, neutral]
    validated_label_condition: incorrect
`

// askUserConfig leaves "was the model wrong?" to the annotator.
const askUserConfig = `
context:
- name: context
  type: string
input:
- name: statement
  type: string
- name: label
  type: multiclass
  labels: [positive, negative]
output:
- name: label
model_wrong_metric:
  type: ask_user
perf_metric:
  type: accuracy
  reference_name: label
metadata:
  create:
  - name: model_explanation_wrong
    type: string
    model_wrong_condition: true
`

var sentimentLabels = []string{"positive", "negative", "neutral"}

// badToken has the right shape but belongs to no one.
const badToken = "dbk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

// env is one server with a cast of users and the variables scenarios fill in as they go.
type env struct {
	*servertest.Server
	users  map[string]*servertest.User
	tokens map[string]string
	vars   map[string]string
}

// forEachEngine runs fn in parallel on SQLite and, when configured, PostgreSQL.
func forEachEngine(t *testing.T, fn func(t *testing.T, engine string)) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, engine)
		})
	}
}

// enginesFirst is the engine for tests that need only one: SQLite.
func enginesFirst() string { return sqlstoretest.Engines()[0] }

// newEnv starts a server with users alice, bob, carol, dave and erin (plus admin and a bad token).
func newEnv(t *testing.T, engine string, opts ...servertest.Option) *env {
	t.Helper()
	e := &env{Server: servertest.Start(t, engine, opts...), users: map[string]*servertest.User{},
		tokens: map[string]string{"": "", "bad": badToken}, vars: map[string]string{}}
	e.tokens["admin"] = e.AdminToken
	for _, name := range []string{"alice", "bob", "carol", "dave", "erin"} {
		u := e.User(t, name)
		e.users[name], e.tokens[name] = u, u.Token
	}
	return e
}

// expand replaces {name} with the variable's value.
func (e *env) expand(s string) string {
	for k, v := range e.vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

// call sends a request as who ("" anonymous, "bad", "admin", a user's name, or "$var" for the token
// saved in a variable).
func (e *env) call(t *testing.T, method, path, who string, body any) *servertest.Response {
	t.Helper()
	token, ok := e.tokens[who]
	if v, isVar := strings.CutPrefix(who, "$"); isVar {
		token, ok = e.vars[v]
	}
	if !ok {
		t.Fatalf("no token for %q", who)
	}
	return e.Do(t, method, e.expand(path), token, body)
}

// mustCall is call that fails t unless the status is want.
func (e *env) mustCall(t *testing.T, want int, method, path, who string, body any) *servertest.Response {
	t.Helper()
	r := e.call(t, method, path, who, body)
	if r.Status != want {
		t.Fatalf("%s %s as %q: status %d, want %d: %s", method, e.expand(path), who, r.Status, want, r.Body)
	}
	return r
}

// newTask creates a task as admin with the config and settings, puts a fake model in the loop of
// round 1, and uploads one context per tag ("c1".."cN"); the context ids are saved as vars
// "<code>.c1" and so on.
func (e *env) newTask(t *testing.T, code, config string, settings map[string]any, model *servertest.Fake, contexts int) int64 {
	t.Helper()
	body := map[string]any{"code": code, "name": "Task " + code, "config": config}
	if settings != nil {
		full := map[string]any{"num_matching_validations": 3, "context_strategy": "least_used", "max_examples_per_day": 0,
			"validate_non_fooling": false, "hidden": false, "model_timeout_ms": 5000}
		for k, v := range settings {
			full[k] = v
		}
		body["settings"] = full
	}
	e.mustCall(t, http.StatusCreated, http.MethodPost, "/api/v1/tasks", "admin", body)
	id := e.AddModel(t, code, code+"-fake", model)
	e.mustCall(t, http.StatusOK, http.MethodPut, "/api/v1/tasks/"+code+"/rounds/1/models", "admin",
		map[string]any{"models": []string{fmt.Sprint(id)}})
	e.uploadContexts(t, code, 1, "c", contexts)
	return id
}

// uploadContexts uploads n contexts to round r, tagged prefix1..prefixN, and saves their ids.
func (e *env) uploadContexts(t *testing.T, code string, round int, prefix string, n int) {
	t.Helper()
	var lines []string
	for i := 1; i <= n; i++ {
		lines = append(lines, fmt.Sprintf(`{"context":{"context":"Context %s%d of %s."},"tag":"%s%d"}`, prefix, i, code, prefix, i))
	}
	r := e.mustCall(t, http.StatusCreated, http.MethodPost, fmt.Sprintf("/api/v1/tasks/%s/rounds/%d/contexts", code, round), "admin",
		servertest.Raw{ContentType: "application/x-ndjson", Body: []byte(strings.Join(lines, "\n") + "\n")})
	if got := r.Int(t, "created"); got != int64(n) {
		t.Fatalf("created %d contexts, want %d", got, n)
	}
	for i := 1; i <= n; i++ {
		tag := fmt.Sprintf("%s%d", prefix, i)
		r := e.mustCall(t, http.StatusOK, http.MethodGet, "/api/v1/tasks/"+code+"/context?tag="+tag, "admin", nil)
		if r.String("tag") != tag {
			t.Fatalf("context with tag %s: got %s", tag, r.Body)
		}
		e.vars[code+"."+tag] = r.String("id")
	}
}

// example submits an example as who on context var ctxVar with the statement and label; it fails t
// unless the answer is 201, and returns the example id.
func (e *env) example(t *testing.T, who, code, ctxVar, statement, label string) string {
	t.Helper()
	r := e.mustCall(t, http.StatusCreated, http.MethodPost, "/api/v1/tasks/"+code+"/examples", who, map[string]any{
		"context_id": e.vars[ctxVar], "input": map[string]any{"statement": statement, "label": label}})
	id := r.String("example.id")
	if id == "" {
		t.Fatalf("no example id in %s", r.Body)
	}
	return id
}

// Expected-value markers for scenario rows.
type (
	absentT  struct{}
	presentT struct{}
	// contains: a string containing, or a list holding, the value.
	contains struct{ v any }
	// length: a list or object of that many entries.
	length int
	// notEqualVar: a string different from the variable's value.
	notEqualVar string
	// equalVar: equal to the variable's value.
	equalVar string
	// absentText: a value (if any) that does not echo the text, e.g. a secret or a huge input.
	absentText string
)

var (
	absent  = absentT{}
	present = presentT{}
)

// scenario is one request of a table and what must come back.
type scenario struct {
	name   string
	method string
	path   string // {var} expanded
	who    string
	body   any // a value to send as JSON, a servertest.Raw, or func(*env) any
	status int
	want   map[string]any    // JSON path → expected value or marker
	save   map[string]string // variable → JSON path of the answer
	check  func(t *testing.T, e *env, r *servertest.Response)
}

// run sends the table's requests in order; later rows may use what earlier rows saved.
func (e *env) run(t *testing.T, table []scenario) {
	t.Helper()
	for _, sc := range table {
		t.Run(sc.name, func(t *testing.T) {
			body := sc.body
			if f, ok := body.(func(*env) any); ok {
				body = f(e)
			}
			r := e.call(t, sc.method, sc.path, sc.who, body)
			if r.Status != sc.status {
				t.Errorf("%s %s as %q: status %d, want %d; body %s", sc.method, e.expand(sc.path), sc.who, r.Status, sc.status, clip(r.Body))
			}
			if r.Status >= 400 {
				checkErrorShape(t, r)
			}
			for path, want := range sc.want {
				got, ok := r.Get(path)
				if msg := e.mismatch(got, ok, want); msg != "" {
					t.Errorf("%s: %s; body %s", path, msg, clip(r.Body))
				}
			}
			for name, path := range sc.save {
				v := r.String(path)
				if v == "" {
					t.Fatalf("save %s: nothing at %s in %s", name, path, clip(r.Body))
				}
				e.vars[name] = v
			}
			if sc.check != nil {
				sc.check(t, e, r)
			}
		})
	}
}

// checkErrorShape enforces API.md's error body: {"error": {"code", "message", ...}} and nothing that
// looks like an internal error text.
func checkErrorShape(t *testing.T, r *servertest.Response) {
	t.Helper()
	if r.String("error.code") == "" || r.String("error.message") == "" {
		t.Errorf("status %d without {error: {code, message}}: %s", r.Status, clip(r.Body))
	}
	for _, leak := range []string{"goroutine ", ".go:", "sql:", "pq:", "SQLSTATE", "sqlite"} {
		if strings.Contains(string(r.Body), leak) {
			t.Errorf("error body leaks %q: %s", leak, clip(r.Body))
		}
	}
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// mismatch describes how got differs from want, or returns "" when it matches.
func (e *env) mismatch(got any, ok bool, want any) string {
	switch w := want.(type) {
	case absentText:
		if s, _ := got.(string); strings.Contains(s, string(w)) {
			return "echoes the input"
		}
		return ""
	case absentT:
		if ok {
			return fmt.Sprintf("want absent, have %v", got)
		}
		return ""
	case presentT:
		if !ok || got == nil || got == "" {
			return fmt.Sprintf("want a value, have %v (present %v)", got, ok)
		}
		return ""
	}
	if !ok {
		return fmt.Sprintf("absent, want %v", want)
	}
	switch w := want.(type) {
	case nil:
		if got != nil {
			return fmt.Sprintf("have %v, want null", got)
		}
	case int, int64:
		if n, isNum := got.(json.Number); !isNum || n.String() != fmt.Sprint(w) {
			return fmt.Sprintf("have %v, want %v", got, w)
		}
	case float64:
		n, isNum := got.(json.Number)
		f, _ := n.Float64()
		if !isNum || f-w > 1e-9 || w-f > 1e-9 {
			return fmt.Sprintf("have %v, want %v", got, w)
		}
	case contains:
		switch g := got.(type) {
		case string:
			if s, _ := w.v.(string); !strings.Contains(g, s) {
				return fmt.Sprintf("have %q, want it to contain %q", g, s)
			}
		case []any:
			for _, x := range g {
				if e.mismatch(x, true, w.v) == "" {
					return ""
				}
			}
			return fmt.Sprintf("have %v, want it to hold %v", g, w.v)
		default:
			return fmt.Sprintf("have %v, want a string or list containing %v", got, w.v)
		}
	case length:
		switch g := got.(type) {
		case []any:
			if len(g) != int(w) {
				return fmt.Sprintf("have %d entries, want %d", len(g), w)
			}
		case map[string]any:
			if len(g) != int(w) {
				return fmt.Sprintf("have %d entries, want %d", len(g), w)
			}
		default:
			return fmt.Sprintf("have %v, want a list of %d", got, w)
		}
	case map[string]any:
		g, isMap := got.(map[string]any)
		if !isMap {
			return fmt.Sprintf("have %v, want an object", got)
		}
		for k, wv := range w {
			gv, ok := g[k]
			if msg := e.mismatch(gv, ok, wv); msg != "" {
				return k + ": " + msg
			}
		}
	case equalVar:
		if got != e.vars[string(w)] {
			return fmt.Sprintf("have %v, want %s = %q", got, w, e.vars[string(w)])
		}
	case notEqualVar:
		if got == e.vars[string(w)] {
			return fmt.Sprintf("have %v, want anything but %s", got, w)
		}
	default:
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("have %#v, want %#v", got, want)
		}
	}
	return ""
}
