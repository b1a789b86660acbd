package httpx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/httpx"
)

const key = "sk-test-3f9a1c77e2"

func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
}

func TestAPIKeyIsSentButNeverShown(t *testing.T) {
	t.Parallel()
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		// Like some hosted APIs, the server quotes the key it got in its error.
		http.Error(w, "invalid key "+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), 401)
	})
	d, _ := testOptions()
	d.LookupEnv = env(map[string]string{"DYNABENCH_MODEL_OPENAI": key})
	opts := map[string]any{"api_key_env": "DYNABENCH_MODEL_OPENAI"}
	c := newClient(t, s.URL, opts, d)
	_, err := call(context.Background(), c)
	wantKind(t, err, dynabench.ModelBadStatus)
	if !strings.Contains(err.Error(), "invalid key [redacted]") {
		t.Errorf("message %q: the server should have got the key, and we should not show it", err)
	}
	for _, text := range []string{err.Error(), c.Health().LastError, fmt.Sprintf("%+v %#v", c, c), fmt.Sprint(opts)} {
		if strings.Contains(text, key) {
			t.Errorf("the key leaked into %q", text)
		}
	}
}

func TestAPIKeyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "openai"), []byte("  "+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got string
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		_, _ = io.WriteString(w, "{}")
	})
	for _, path := range []string{"openai", filepath.Join(dir, "openai")} {
		d, _ := testOptions()
		d.SecretDir = dir
		c := newClient(t, s.URL, map[string]any{"api_key_file": path}, d)
		if _, err := call(context.Background(), c); err != nil || got != "Bearer "+key {
			t.Errorf("%s: header %q, %v", path, got, err)
		}
	}
}

func TestOptionProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "other")
	_ = os.WriteFile(outside, []byte("not for models"), 0o600)
	_ = os.Symlink(outside, filepath.Join(dir, "escape"))
	_ = os.WriteFile(filepath.Join(dir, "empty"), []byte("\n"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "huge"), make([]byte, 10000), 0o600)
	d := httpx.Options{SecretDir: dir, LookupEnv: env(map[string]string{"DYNABENCH_MODEL_EMPTY": " ", "HOME": "/root"})}
	tests := []struct {
		name    string
		url     string
		opts    map[string]any
		noDir   bool
		field   string
		message string
	}{
		{name: "no url", url: "", field: "url", message: "required"},
		{name: "not http", url: "ftp://host/x", field: "url", message: "http or https"},
		{name: "relative", url: "/model", field: "url", message: "absolute"},
		{name: "credentials in url", url: "http://user:pw@host/", field: "url", message: "must not hold credentials"},
		{name: "unknown option", opts: map[string]any{"timeout": 5}, field: "options.timeout", message: "unknown option"},
		{name: "timeout not a number", opts: map[string]any{"timeout_ms": "5s"}, field: "options.timeout_ms", message: "whole number"},
		{name: "timeout too long", opts: map[string]any{"timeout_ms": 1e9}, field: "options.timeout_ms", message: "from 1 to 600000"},
		{name: "concurrency zero", opts: map[string]any{"max_concurrency": 0}, field: "options.max_concurrency"},
		{name: "env outside the prefix", opts: map[string]any{"api_key_env": "HOME"}, field: "options.api_key_env", message: "DYNABENCH_MODEL_"},
		{name: "env not set", opts: map[string]any{"api_key_env": "DYNABENCH_MODEL_NOPE"}, field: "options.api_key_env", message: "not set"},
		{name: "env empty", opts: map[string]any{"api_key_env": "DYNABENCH_MODEL_EMPTY"}, field: "options.api_key_env", message: "empty"},
		{name: "both sources", opts: map[string]any{"api_key_env": "DYNABENCH_MODEL_X", "api_key_file": "k"}, field: "options.api_key_file", message: "not both"},
		{name: "file escaping by ..", opts: map[string]any{"api_key_file": "../etc/passwd"}, field: "options.api_key_file", message: "secret directory"},
		{name: "file outside the dir", opts: map[string]any{"api_key_file": outside}, field: "options.api_key_file", message: "secret directory"},
		{name: "file escaping by symlink", opts: map[string]any{"api_key_file": "escape"}, field: "options.api_key_file", message: "cannot read"},
		{name: "file missing", opts: map[string]any{"api_key_file": "nope"}, field: "options.api_key_file", message: "no such file"},
		{name: "file empty", opts: map[string]any{"api_key_file": "empty"}, field: "options.api_key_file", message: "empty"},
		{name: "file huge", opts: map[string]any{"api_key_file": "huge"}, field: "options.api_key_file", message: "too large"},
		{name: "files refused without a dir", opts: map[string]any{"api_key_file": "k"}, noDir: true, field: "options.api_key_file", message: "no secret directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := tt.url
			if url == "" && tt.field != "url" {
				url = "http://model.example/"
			}
			opts := d
			if tt.noDir {
				opts.SecretDir = ""
			}
			o := httpx.NewOpts(tt.opts)
			httpx.NewClient(&dynabench.Model{Kind: "dynalab", URL: url, Options: tt.opts}, o, opts)
			err := o.Err()
			var de *dynabench.Error
			if !errors.As(err, &de) || de.Code != dynabench.EINVALID || de.Field != tt.field || !strings.Contains(de.Message, tt.message) {
				t.Fatalf("error %#v, want field %s with %q", err, tt.field, tt.message)
			}
			if strings.Contains(err.Error(), "pw@") || strings.Contains(err.Error(), "not for models") {
				t.Errorf("the error echoes a secret: %v", err)
			}
		})
	}
}

func TestOptsReadsEveryShape(t *testing.T) {
	t.Parallel()
	o := httpx.NewOpts(map[string]any{"i": 3.0, "f": 0.5, "b": true, "s": "x", "l": []any{"a", "b"}, "m": map[string]any{"k": ""}})
	if o.Int("i", 0, 0, 10) != 3 || o.Float("f", 0, 0, 1) != 0.5 || !o.Bool("b", false) || o.String("s", "") != "x" ||
		strings.Join(o.Strings("l"), ",") != "a,b" || o.StringMap("m")["k"] != "" || o.Int("absent", 7, 0, 10) != 7 {
		t.Error("values misread")
	}
	if err := o.Err(); err != nil {
		t.Fatal(err)
	}
	bad := httpx.NewOpts(map[string]any{"i": 2.5, "b": "yes", "l": []any{1}, "m": []any{}, "extra": 1})
	bad.Int("i", 0, 0, 10)
	bad.Bool("b", false)
	bad.Strings("l")
	bad.StringMap("m")
	var de *dynabench.Error
	if err := bad.Err(); !errors.As(err, &de) || len(de.Details) != 5 {
		t.Fatalf("error %#v, want 5 problems", err)
	}
}
