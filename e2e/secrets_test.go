package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestNoSecretInLogsOrDatabase runs a full flow against the real binary at debug log level —
// register, a failed and a good login, an API token, a model registered with api_key_env whose
// server first fails echoing the key back, examples, validations — then reads every byte the
// server logged and every byte of the SQLite files, and finds no password, no token, and the model
// key nowhere (the database holds only the variable's name).
func TestNoSecretInLogsOrDatabase(t *testing.T) {
	bin := binary(t)
	secret := func(prefix string) string {
		b := make([]byte, 12)
		rand.Read(b)
		return prefix + hex.EncodeToString(b)
	}
	modelKey := secret("sk-e2e-")
	literalKey := secret("sk-literal-")
	passwords := map[string]string{"alice": secret("pw-alice-"), "bob": secret("pw-bob-"), "carol": secret("pw-carol-")}
	wrongPassword := secret("pw-wrong-")

	// The model: a Dynalab server that checks the key, and on its first call in the loop fails with a
	// body that quotes the key (as a careless server might) to see that the error text is scrubbed.
	// Its batch calls (the evaluation queued when it is registered) answer normally.
	var calls, singles, authorised atomic.Int64
	const answer = `{"label": "negative", "prob": {"positive": 0.1, "negative": 0.8, "neutral": 0.1}}`
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var batch struct {
			Samples []json.RawMessage `json:"dataset_samples"`
		}
		json.NewDecoder(r.Body).Decode(&batch)
		if r.Header.Get("Authorization") == "Bearer "+modelKey {
			authorised.Add(1)
		}
		calls.Add(1)
		if strings.HasSuffix(r.URL.Path, "/batch_evaluation") {
			io.WriteString(w, "["+strings.TrimSuffix(strings.Repeat(answer+",", len(batch.Samples)), ",")+"]")
			return
		}
		if singles.Add(1) == 1 {
			http.Error(w, "upstream refused key "+modelKey, http.StatusInternalServerError)
			return
		}
		io.WriteString(w, answer)
	}))
	defer model.Close()

	dir := t.TempDir()
	dbPath := filepath.Join(dir, "dynabench.db")
	srv := startServerWith(t, bin, dbPath, dir, 0, []string{"--log-level", "debug"}, []string{"DYNABENCH_MODEL_KEY_E2E=" + modelKey})
	hc := newHTTPClient()
	defer hc.CloseIdleConnections()
	anon := &apiClient{base: srv.base, hc: hc}
	var auth struct {
		Token string `json:"token"`
	}
	tokens := map[string]string{}
	for _, u := range []string{"alice", "bob", "carol"} {
		anon.mustDo(t, http.MethodPost, "/api/v1/auth/register",
			map[string]any{"username": u, "email": u + "@example.com", "password": passwords[u]}, &auth, 201)
		tokens[u+"-register"] = auth.Token
	}
	anon.mustDo(t, http.MethodPost, "/api/v1/auth/login", map[string]any{"username": "alice", "password": wrongPassword}, nil, 401)
	anon.mustDo(t, http.MethodPost, "/api/v1/auth/login", map[string]any{"username": "alice", "password": passwords["alice"]}, &auth, 200)
	tokens["alice"] = auth.Token
	anon.mustDo(t, http.MethodPost, "/api/v1/auth/login", map[string]any{"username": "admin", "password": adminPassword}, &auth, 200)
	tokens["admin"] = auth.Token
	alice := &apiClient{base: srv.base, token: tokens["alice"], hc: hc}
	var tok struct {
		Token string `json:"token"`
	}
	alice.mustDo(t, http.MethodPost, "/api/v1/me/tokens", map[string]any{"name": "cli"}, &tok, 201)
	tokens["alice-api"] = tok.Token
	alice.token = tok.Token
	bad := &apiClient{base: srv.base, token: tokens["alice"] + "x", hc: hc}
	bad.mustDo(t, http.MethodGet, "/api/v1/me", nil, nil, 401)

	// The admin registers the model with a key by reference, and tries a key in clear (refused).
	admin := &apiClient{base: srv.base, token: tokens["admin"], hc: hc}
	admin.mustDo(t, http.MethodPost, "/api/v1/tasks/sentiment/models",
		map[string]any{"name": "clear", "kind": "dynalab", "url": model.URL, "options": map[string]any{"api_key": literalKey}}, nil, 422)
	var m struct {
		ID string `json:"id"`
	}
	admin.mustDo(t, http.MethodPost, "/api/v1/tasks/sentiment/models",
		map[string]any{"name": "keyed", "kind": "dynalab", "url": model.URL, "options": map[string]any{"api_key_env": "DYNABENCH_MODEL_KEY_E2E"}}, &m, 201)
	admin.mustDo(t, http.MethodPut, "/api/v1/tasks/sentiment/rounds/1/models", map[string]any{"models": []string{m.ID}}, nil, 200)
	var detail bytes.Buffer
	st, b, _ := admin.do(t.Context(), http.MethodGet, "/api/v1/models/"+m.ID, nil)
	detail.Write(b)
	if st != 200 {
		t.Fatalf("GET model: %d %s", st, b)
	}

	// Examples (the first meets the failing model) and validations.
	var ids []string
	for i := range 4 {
		var cx struct {
			ID string `json:"id"`
		}
		alice.mustDo(t, http.MethodGet, "/api/v1/tasks/sentiment/context", nil, &cx, 200)
		var eb exampleBody
		alice.mustDo(t, http.MethodPost, "/api/v1/tasks/sentiment/examples",
			map[string]any{"context_id": cx.ID, "input": map[string]any{"statement": fmt.Sprintf("it was fine %d", i), "label": "positive"}}, &eb, 201)
		ids = append(ids, eb.Example.ID)
	}
	for _, u := range []string{"bob", "carol"} {
		c := &apiClient{base: srv.base, token: tokens[u+"-register"], hc: hc}
		for _, id := range ids {
			c.mustDo(t, http.MethodPost, "/api/v1/examples/"+id+"/validations", map[string]any{"label": "correct"}, nil, 201, 409)
		}
	}
	if authorised.Load() == 0 || calls.Load() < 2 {
		t.Errorf("the model got %d call(s), %d with the key: the key must be sent", calls.Load(), authorised.Load())
	}
	srv.kill()

	logBytes, err := os.ReadFile(srv.logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(logBytes, []byte(`"level":"DEBUG"`)) {
		t.Error("the log holds no debug line: the test did not run at debug level")
	}
	if !bytes.Contains(logBytes, []byte("model in the loop failed")) || !bytes.Contains(logBytes, []byte("upstream refused key")) {
		t.Error("the model's failure was not logged: the scrubbing was not exercised")
	}
	secrets := map[string]string{"model key": modelKey, "clear key": literalKey, "wrong password": wrongPassword, "admin password": adminPassword}
	for u, p := range passwords {
		secrets["password of "+u] = p
	}
	for name, v := range tokens {
		secrets["token "+name] = v
	}
	places := map[string][]byte{"server log": logBytes, "GET /api/v1/models/{id}": detail.Bytes()}
	for _, suffix := range []string{"", "-wal"} {
		if b, err := os.ReadFile(dbPath + suffix); err == nil {
			places["database file "+filepath.Base(dbPath+suffix)] = b
		}
	}
	for place, content := range places {
		for name, v := range secrets {
			if v != "" && bytes.Contains(content, []byte(v)) {
				t.Errorf("the %s is in the %s", name, place)
			}
		}
	}
	t.Logf("%d secret(s) looked for in %d place(s) (%d log bytes, %d lines): none found; the model got %d call(s), %d with its key",
		len(secrets), len(places), len(logBytes), strings.Count(string(logBytes), "\n"), calls.Load(), authorised.Load())
}
