package api_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// TestDynalabModelInTheLoop registers a real HTTP model that speaks Dynabench's protocol, puts it in
// the loop of round 1, and checks that an annotator's example is answered by it, that the answer
// decides model_wrong, and that the model's health counts the call.
func TestDynalabModelInTheLoop(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	var got atomic.Value
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/model/single_evaluation" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, "bad json", 400)
			return
		}
		got.Store(in)
		// Probabilities that do not sum to one, as real servers send: the platform normalises them.
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"label":"neutral","prob":{"entailed":0.2,"neutral":0.6,"contradictory":0.4}}`))
	}))
	t.Cleanup(func() {
		model.Close()
		if calls.Load() == 0 {
			t.Error("the model server was never called")
		}
	})
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := servertest.Start(t, engine)
			alice := srv.User(t, "alice")
			reg := srv.Do(t, "POST", "/api/v1/tasks/nli/models", srv.AdminToken, map[string]any{
				"name": "remote-nli", "kind": "dynalab", "url": model.URL, "options": map[string]any{"timeout_ms": 2000}})
			if reg.Status != http.StatusCreated {
				t.Fatalf("register: %d %s", reg.Status, reg.Body)
			}
			id := reg.String("id")
			if r := srv.Do(t, "PUT", "/api/v1/tasks/nli/rounds/1/models", srv.AdminToken, map[string]any{"models": []string{id}}); r.Status != 200 {
				t.Fatalf("put in loop: %d %s", r.Status, r.Body)
			}
			ctx := srv.Do(t, "GET", "/api/v1/tasks/nli/context", alice.Token, nil)
			ex := srv.Do(t, "POST", "/api/v1/tasks/nli/examples", alice.Token, map[string]any{
				"context_id": ctx.String("id"), "input": map[string]any{"hypothesis": "A person is outside.", "label": "entailed"}})
			if ex.Status != http.StatusCreated {
				t.Fatalf("example: %d %s", ex.Status, ex.Body)
			}
			if w := ex.String("example.model_wrong"); w != "true" {
				t.Errorf("model_wrong = %s, want true (model said neutral, annotator entailed); body %s", w, ex.Body)
			}
			if n := ex.String("example.model.name"); n != "remote-nli" {
				t.Errorf("answered by %q, want remote-nli", n)
			}
			// 0.6 / (0.2 + 0.6 + 0.4) = 0.5 after normalisation.
			if p := ex.String("example.model_output.prob.neutral"); !(math.Abs(toFloat(p)-0.5) <= 1e-9) {
				t.Errorf("prob.neutral = %v, want 0.5 (normalised)", p)
			}
			in, _ := got.Load().(map[string]any)
			if in["hypothesis"] != "A person is outside." || in["context"] == nil || in["label"] != nil {
				t.Errorf("model input %v: want context and hypothesis, never the target label", in)
			}
			m := srv.Do(t, "GET", "/api/v1/models/"+id, srv.AdminToken, nil)
			if c := m.String("health.calls"); c == "" || c == "0" {
				t.Errorf("health.calls = %q after a call; body %s", c, m.Body)
			}
			srv.NoDrift(t)
		})
	}
}

// TestRegisterModelRefusesSecretsAndBadOptions: keys only by reference, by owners; options the
// adapter cannot use are refused at registration with the field named.
func TestRegisterModelRefusesSecretsAndBadOptions(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, sqlstoretest.Engines()[0])
	alice := srv.User(t, "alice")
	cases := []struct {
		name, token string
		body        map[string]any
		status      int
		field       string
	}{
		{"key in clear", srv.AdminToken, map[string]any{"name": "m1", "kind": "openai", "url": "http://127.0.0.1:1",
			"options": map[string]any{"model": "x", "api_key": "sk-123"}}, 422, "options.api_key"},
		{"key env by non-owner", alice.Token, map[string]any{"name": "m2", "kind": "openai", "url": "http://127.0.0.1:1",
			"options": map[string]any{"model": "x", "api_key_env": "DYNABENCH_MODEL_KEY_X"}}, 422, "options.api_key_env"},
		{"server secret env", srv.AdminToken, map[string]any{"name": "m3", "kind": "openai", "url": "http://127.0.0.1:1",
			"options": map[string]any{"model": "x", "api_key_env": "DYNABENCH_ADMIN_PASSWORD"}}, 422, "options.api_key_env"},
		{"credentials in url", alice.Token, map[string]any{"name": "m4", "kind": "dynalab", "url": "http://u:p@127.0.0.1:1"}, 422, "url"},
		{"builtin by register", alice.Token, map[string]any{"name": "m5", "kind": "builtin"}, 422, "kind"},
		{"openai without model option", alice.Token, map[string]any{"name": "m6", "kind": "openai", "url": "http://127.0.0.1:1"}, 422, "options.model"},
		{"anonymous", "", map[string]any{"name": "m7", "kind": "dynalab", "url": "http://127.0.0.1:1"}, 401, ""},
		{"ok", alice.Token, map[string]any{"name": "m8", "kind": "dynalab", "url": "http://127.0.0.1:1"}, 201, ""},
	}
	for _, c := range cases {
		r := srv.Do(t, "POST", "/api/v1/tasks/nli/models", c.token, c.body)
		if r.Status != c.status {
			t.Errorf("%s: status %d, want %d; body %s", c.name, r.Status, c.status, r.Body)
			continue
		}
		if c.field != "" {
			if f := r.String("error.field"); f != c.field {
				t.Errorf("%s: error.field %q, want %q; body %s", c.name, f, c.field, r.Body)
			}
		}
		if r.Status >= 400 && (containsAny(string(r.Body), "sk-123")) {
			t.Errorf("%s: the secret is echoed: %s", c.name, r.Body)
		}
	}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		for i := 0; i+len(x) <= len(s); i++ {
			if s[i:i+len(x)] == x {
				return true
			}
		}
	}
	return false
}

func toFloat(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}
