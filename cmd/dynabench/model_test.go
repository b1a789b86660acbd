package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
	"github.com/dynabench-go/dynabench/internal/training"
)

// syncBuffer is a bytes.Buffer safe to read while a command writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// run executes the dynabench command line and returns its stdout, stderr and error.
func run(ctx context.Context, args ...string) (string, string, error) {
	var stdout, stderr syncBuffer
	cmd := newRootCmd()
	cmd.SetArgs(args)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	err := cmd.ExecuteContext(ctx)
	return stdout.String(), stderr.String(), err
}

// demoDatabase seeds the demo tasks into a fresh database of the engine and adds verified examples
// to round 1 of the NLI task. It returns the global flags that select it.
func demoDatabase(t *testing.T, engine string) []string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	url := sqlstoretest.URL(t, engine)
	m, err := server.Open(ctx, server.Config{DataDir: dir, DatabaseURL: url, Demo: true, AdminPassword: "correct horse battery",
		InsecureFastHashing: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	store := m.Service.Store
	task, err := store.FindTaskByCode(ctx, "nli")
	must(t, err)
	round, err := store.FindRound(ctx, task.ID, 1)
	must(t, err)
	admin, err := store.FindUserByUsername(ctx, "admin")
	must(t, err)
	c := &dynabench.Context{TaskID: task.ID, RoundID: round.ID, Data: map[string]any{"context": "Three children are flying kites in the park."}}
	must(t, store.CreateContexts(ctx, []*dynabench.Context{c}))
	for i, h := range []string{"More than seven children are flying kites.", "It is not true that nobody is flying kites.",
		"The children are flying kites in the park because it is a holiday."} {
		status := dynabench.StatusVerified
		if i == 2 {
			status = dynabench.StatusPending
		}
		ex := &dynabench.Example{TaskID: task.ID, RoundID: round.ID, ContextID: c.ID, UserID: admin.ID, Status: status,
			Input: map[string]any{"hypothesis": h, "label": []string{"contradictory", "entailed", "neutral"}[i]}}
		must(t, store.CreateExample(ctx, ex))
	}
	m.Close()
	return []string{"--data-dir", dir, "--database-url", url}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestModelTrainRegisterServe(t *testing.T) {
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			global := demoDatabase(t, engine)
			dir := global[1]
			out := filepath.Join(t.TempDir(), "nli.dbm")
			args := append([]string{"model", "train", "--task", "nli", "--seed-data", "--rounds", "1", "--register",
				"--out", out, "--name", "nli-r2"}, global...)
			stdout, stderr, err := run(ctx, args...)
			if err != nil {
				t.Fatalf("train: %v\n%s", err, stderr)
			}
			for _, want := range []string{"source seed:nli", "source round:1", "2 rows", "held out", "accuracy", "wrote " + out, `registered model`, `"nli-r2"`} {
				if !strings.Contains(stdout, want) {
					t.Errorf("summary lacks %q:\n%s", want, stdout)
				}
			}
			for _, stage := range []string{"loading", "splitting", "training", "evaluating", "saving"} {
				if !strings.Contains(stderr, stage) {
					t.Errorf("progress lacks stage %q:\n%s", stage, stderr)
				}
			}

			// The registered model points at its blob, and the blob is the --out file.
			db, err := sqlstore.Open(ctx, global[3], sqlstore.Options{})
			must(t, err)
			defer db.Close()
			store := sqlstore.NewStore(db)
			task, err := store.FindTaskByCode(ctx, "nli")
			must(t, err)
			models, err := store.FindModels(ctx, task.ID)
			must(t, err)
			m := models[len(models)-1]
			if m.Name != "nli-r2" || m.Kind != dynabench.KindBuiltin || m.Published {
				t.Fatalf("registered %+v", m)
			}
			key, _ := m.Options[training.OptionBlobKey].(string)
			blobFile, err := os.ReadFile(filepath.Join(dir, "blobs", filepath.FromSlash(key)))
			must(t, err)
			outFile, err := os.ReadFile(out)
			must(t, err)
			if !bytes.Equal(blobFile, outFile) {
				t.Fatal("the registered blob is not the --out file")
			}
			art, err := store.FindModelArtifact(ctx, m.ID)
			must(t, err)
			if art.SHA256 != m.Options[training.OptionSHA256] || art.Manifest["task"] != "nli" {
				t.Fatalf("artifact %+v", art)
			}

			// show prints the manifest.
			stdout, _, err = run(ctx, "model", "show", out)
			must(t, err)
			var manifest training.Manifest
			must(t, json.Unmarshal([]byte(stdout), &manifest))
			if manifest.Sources[1].Name != "round:1" || manifest.Sources[1].Rows != 2 {
				t.Fatalf("manifest sources %+v", manifest.Sources)
			}

			serveAndCall(t, out)
		})
	}
}

// serveAndCall runs `model serve` on a free port, calls it, and stops it as a signal would.
func serveAndCall(t *testing.T, path string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		cmd := newRootCmd()
		cmd.SetArgs([]string{"model", "serve", "--model", path, "--addr", "127.0.0.1:0"})
		cmd.SetOut(&stdout)
		cmd.SetErr(&stderr)
		done <- cmd.ExecuteContext(ctx)
	}()
	addr := regexp.MustCompile(`http://[0-9.:]+`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s %s", stdout.String(), stderr.String())
		}
		base = addr.FindString(stdout.String())
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Post(base+"/model/single_evaluation", "application/json",
		strings.NewReader(`{"context": "A man is sleeping.", "hypothesis": "A man is awake."}`))
	must(t, err)
	var out map[string]any
	must(t, json.NewDecoder(resp.Body).Decode(&out))
	resp.Body.Close()
	if resp.StatusCode != 200 || out["label"] == nil || out["prob"] == nil {
		t.Fatalf("%d %v", resp.StatusCode, out)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve ended with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not shut down")
	}
}

func TestModelCommandErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	global := demoDatabase(t, sqlstore.SQLite)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	must(t, os.WriteFile(bad, []byte(`{"context": "x", "hypothesis": "y", "label": "entailed"}`+"\n"+`{"context": "x", "hypothesis": "y", "label": "maybe"}`), 0o644))
	garbage := filepath.Join(t.TempDir(), "garbage.dbm")
	must(t, os.WriteFile(garbage, []byte("not a model"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"model", "train", "--task", "nli"}, "nothing to train on"},
		{[]string{"model", "train", "--task", "nope", "--seed-data"}, `no task "nope"`},
		{[]string{"model", "train", "--task", "nli", "--rounds", "9"}, "has no round 9"},
		{[]string{"model", "train", "--task", "nli", "--data", bad}, "bad.jsonl:2"},
		{[]string{"model", "train", "--task", "nli", "--data", "/does/not/exist.jsonl"}, "no such file"},
		{[]string{"model", "train", "--task", "nli", "--seed-data", "--heldout", "1"}, "heldout"},
		{[]string{"model", "train", "--task", "nli", "--seed-data", "--register", "--owner", "ghost"}, `no user "ghost"`},
		{[]string{"model", "serve", "--model", garbage}, "not a valid model artifact"},
		{[]string{"model", "show", "/does/not/exist.dbm"}, "no such file"},
	} {
		_, _, err := run(ctx, append(tc.args, global...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error mentioning %q", tc.args, err, tc.want)
		}
	}
}
