package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dynabench-go/dynabench/internal/server"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
)

// EnvOptions describe the world a comparison runs in.
type EnvOptions struct {
	Task        string // demo task code: sentiment, nli, qa or hs
	Clients     int    // load-generator clients the targets must serve
	Users       int    // accounts the clients share round-robin; default Clients
	Contexts    int    // contexts each client fetches and cycles through; default 4
	DatabaseURL string // "": a temporary SQLite file; postgres://: a fresh schema in that database
	Synchronous string // SQLite synchronous pragma for both targets
	ServerLog   io.Writer
}

// Env is a running server with a fresh, seeded database, accounts with API tokens, contexts
// fetched for every client, and the baseline on the same database.
type Env struct {
	Engine      string
	Synchronous string // "" for PostgreSQL
	Main        *server.Main
	Baseline    *Baseline

	task     string
	inputs   *inputs
	tokens   []string
	contexts [][]contextRef // per client
	client   *http.Client
	fooled   atomic.Int64
	tx       *txTimer

	stopServe func()
	cleanup   []func()
}

// Start builds the Env. The database is always new: a file in a temporary directory, or a schema
// created for the run (and dropped by Close), so a benchmark never writes into existing data.
func Start(ctx context.Context, opt EnvOptions) (*Env, error) {
	if opt.Clients < 1 || opt.Clients > MaxConcurrency {
		return nil, fmt.Errorf("bench: 1 to %d clients", MaxConcurrency)
	}
	opt.Users = orDefault(opt.Users, opt.Clients)
	opt.Contexts = orDefault(opt.Contexts, 4)
	if opt.Users > 10000 || opt.Contexts > 100 {
		return nil, errors.New("bench: at most 10000 users and 100 contexts per client")
	}
	env := &Env{task: opt.Task, client: NewClient(opt.Clients)}
	if err := env.start(ctx, opt); err != nil {
		env.Close()
		return nil, err
	}
	return env, nil
}

func (env *Env) start(ctx context.Context, opt EnvOptions) error {
	// The server keeps blobs (and by default the SQLite file) in its data directory: a temporary
	// one, so that a benchmark leaves nothing behind in the working directory.
	dir, err := os.MkdirTemp("", "dynabench-bench-")
	if err != nil {
		return err
	}
	env.cleanup = append(env.cleanup, func() { os.RemoveAll(dir) })
	dbURL, err := env.freshDatabase(ctx, opt.DatabaseURL, dir)
	if err != nil {
		return err
	}
	if err := env.startServer(ctx, dbURL, dir, opt); err != nil {
		return err
	}
	if err := env.createUsers(ctx, opt.Users); err != nil {
		return err
	}
	if err := env.fetchContexts(ctx, opt.Clients, opt.Contexts); err != nil {
		return err
	}
	if err := env.prime(ctx); err != nil {
		return err
	}
	env.Baseline, err = StartBaseline(ctx, dbURL, env.Engine, opt.Synchronous)
	return err
}

// orDefault returns v, or def when v is not positive.
func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// freshDatabase returns the URL of an empty database for the run: a schema created in the
// PostgreSQL database at raw, the new SQLite file raw, or a SQLite file in dir.
func (env *Env) freshDatabase(ctx context.Context, raw, dir string) (string, error) {
	if strings.HasPrefix(raw, "postgres://") || strings.HasPrefix(raw, "postgresql://") {
		return env.freshSchema(ctx, raw)
	}
	if raw == "" {
		return filepath.Join(dir, "bench.db"), nil
	}
	path, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(raw, "sqlite:"), "file:"), "?")
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("bench: %s exists (or cannot be checked); give a new SQLite path, or none for a temporary one", path)
	}
	return raw, nil
}

// freshSchema creates a schema named for the run in the database at base and returns base with
// search_path pointing at it.
func (env *Env) freshSchema(ctx context.Context, base string) (string, error) {
	b := make([]byte, 6)
	rand.Read(b)
	schema := "dynabench_bench_" + hex.EncodeToString(b)
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("bench: database URL: %w", err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		return "", fmt.Errorf("bench: create schema: %w", err)
	}
	env.cleanup = append(env.cleanup, func() { dropSchema(base, schema) })
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func dropSchema(base, schema string) {
	db, err := sql.Open("pgx", base)
	if err != nil {
		return
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db.ExecContext(ctx, `DROP SCHEMA `+schema+` CASCADE`)
}

// startServer opens, seeds and starts the real server on a loopback port. Its log is formatted
// as in production (text, info level: one line per request) and written to log, or discarded.
func (env *Env) startServer(ctx context.Context, dbURL, dataDir string, opt EnvOptions) error {
	if opt.ServerLog == nil {
		opt.ServerLog = io.Discard
	}
	log := slog.New(slog.NewTextHandler(opt.ServerLog, &slog.HandlerOptions{Level: slog.LevelInfo}))
	pw := make([]byte, 12)
	rand.Read(pw)
	m, err := server.Open(ctx, server.Config{Addr: "127.0.0.1:0", DatabaseURL: dbURL, DataDir: dataDir, Synchronous: opt.Synchronous,
		Demo: true, AdminPassword: hex.EncodeToString(pw), InsecureFastHashing: true, Version: "bench"}, log)
	if err != nil {
		return err
	}
	env.Main, env.Engine = m, m.DB.Engine
	// Wrapped before serving: handlers read Service.Store.
	env.tx = &txTimer{Store: m.Service.Store}
	m.Service.Store = env.tx
	if env.Engine == sqlstore.SQLite {
		env.Synchronous = strings.ToUpper(opt.Synchronous)
		if env.Synchronous == "" {
			env.Synchronous = "FULL"
		}
	}
	if err := m.Listen(); err != nil {
		m.Close()
		env.Main = nil
		return err
	}
	serveCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Serve(serveCtx) }()
	env.stopServe = func() { cancel(); <-done; m.Close() }
	return env.loadInputs(ctx)
}

// loadInputs reads the task's config, which decides what a valid input looks like.
func (env *Env) loadInputs(ctx context.Context) error {
	t, err := env.Main.Service.Task(ctx, env.task)
	if err != nil {
		return fmt.Errorf("bench: task %q: %w", env.task, err)
	}
	cfg, err := env.Main.Service.Config(t)
	if err != nil {
		return err
	}
	env.inputs, err = newInputs(cfg)
	return err
}

// createUsers makes the accounts in-process: registering over HTTP is rate-limited and hashes
// passwords with argon2 at production cost, neither of which is what this benchmark measures.
func (env *Env) createUsers(ctx context.Context, n int) error {
	svc := env.Main.Service
	for i := range n {
		name := fmt.Sprintf("bench-%04d", i)
		u, err := svc.CreateUser(ctx, name, name+"@example.com", "bench-password-"+name, false)
		if err != nil {
			return fmt.Errorf("bench: user %s: %w", name, err)
		}
		_, token, err := svc.CreateAPIToken(ctx, u, "bench")
		if err != nil {
			return fmt.Errorf("bench: token for %s: %w", name, err)
		}
		env.tokens = append(env.tokens, token)
	}
	return nil
}

func (env *Env) token(i int) string { return env.tokens[i%len(env.tokens)] }

// fetchContexts asks the server for k contexts per client, as an annotator's page does before
// writing; the task's strategy breaks ties at random, so the clients spread over the pool.
func (env *Env) fetchContexts(ctx context.Context, clients, k int) error {
	env.contexts = make([][]contextRef, clients)
	for i := range clients {
		for range k {
			c, err := env.fetchContext(ctx, i)
			if err != nil {
				return err
			}
			env.contexts[i] = append(env.contexts[i], c)
		}
	}
	return nil
}

func (env *Env) fetchContext(ctx context.Context, i int) (contextRef, error) {
	var c contextRef
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.Main.URL()+"/api/v1/tasks/"+env.task+"/context", nil)
	if err != nil {
		return c, err
	}
	req.Header.Set("Authorization", "Bearer "+env.token(i))
	resp, err := env.client.Do(req)
	if err != nil {
		return c, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return c, fmt.Errorf("bench: GET context: status %d: %s", resp.StatusCode, clip(body))
	}
	if err := json.Unmarshal(body, &c); err != nil || c.ID == "" {
		return c, fmt.Errorf("bench: GET context: unexpected body %s", clip(body))
	}
	return c, nil
}

// prime submits one example, which makes the server train the built-in model (it does so on
// first use); that one-off cost belongs to neither the warm-up nor the measurement.
func (env *Env) prime(ctx context.Context) error {
	t := env.Server()
	req, err := t.Request(ctx, 0, -1)
	if err != nil {
		return err
	}
	resp, err := env.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := t.Check(resp.StatusCode, body); err != nil {
		return fmt.Errorf("bench: first example: %w", err)
	}
	return nil
}

// Fooled counts the server's answers in which the model was fooled, since the last call.
func (env *Env) Fooled() int64 { return env.fooled.Swap(0) }

// Drift recounts every counter from the rows (as `dynabench doctor` does) and returns how many
// disagree: concurrent submissions must leave none.
func (env *Env) Drift(ctx context.Context) (int, error) {
	d, err := sqlstore.NewStore(env.Main.DB).Recount(ctx)
	return len(d), err
}

// Close stops both servers and removes the database.
func (env *Env) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	if env.Baseline != nil {
		err = env.Baseline.Close(ctx)
	}
	closeIdle(env.client)
	if env.stopServe != nil {
		env.stopServe()
	} else if env.Main != nil {
		env.Main.Close()
	}
	for i := len(env.cleanup) - 1; i >= 0; i-- {
		env.cleanup[i]()
	}
	return err
}
