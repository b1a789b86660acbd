// Package server wires the platform together: configuration, the database, the rules, the HTTP API,
// first-start bootstrap (admin account, demo tasks) and graceful shutdown. An end-to-end test can
// start it on a random port with a temporary database.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters"
	"github.com/dynabench-go/dynabench/internal/api"
	"github.com/dynabench-go/dynabench/internal/blob"
	"github.com/dynabench-go/dynabench/internal/ratelimit"
	"github.com/dynabench-go/dynabench/internal/secret"
	"github.com/dynabench-go/dynabench/internal/service"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
	"github.com/dynabench-go/dynabench/internal/web"
	"github.com/dynabench-go/dynabench/internal/worker"
)

// Config is built once in main from flags and DYNABENCH_* variables.
type Config struct {
	Addr             string // listen address, e.g. ":8080"
	DatabaseURL      string // SQLite path or postgres:// URL; default <DataDir>/dynabench.db
	DataDir          string // where the SQLite file and blobs live; default "."
	Synchronous      string // SQLite synchronous pragma: FULL (default) or NORMAL
	AdminPassword    string // for the first admin; generated when empty
	Demo             bool   // seed the demo tasks on an empty database
	OpenRegistration bool
	TrustProxy       bool
	// DenyPrivateModelURLs refuses to call models on loopback, private and link-local addresses
	// (turn on where users you do not trust register models; off on a laptop, where models are local).
	DenyPrivateModelURLs bool
	Version              string
	// Workers is how many in-process evaluation workers run; 0 means none (evaluation then happens
	// in `dynabench worker` processes).
	Workers int
	// JobLease is how long a worker holds an evaluation job between heartbeats (0: 60 s). A worker
	// that dies loses its job to another worker this long after its last heartbeat.
	JobLease time.Duration
	// NoPlatformJobs leaves the platform's own jobs (the retraining cycle) queued: for tests that
	// inspect queued jobs. Remote workers never run them, so a server should not set it.
	NoPlatformJobs bool
	// Fast password hashing, for tests only.
	InsecureFastHashing bool
	// HTTP server timeouts against slow or idle clients; zero means the defaults (10 s to send the
	// headers, 60 s for the whole request, 90 s to take the answer, 120 s idle between requests).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
}

// orDefault returns d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// DatabaseURLOrDefault resolves the database location.
func (c Config) DatabaseURLOrDefault() string {
	if c.DatabaseURL != "" {
		return c.DatabaseURL
	}
	return filepath.Join(c.dataDir(), "dynabench.db")
}

func (c Config) dataDir() string {
	if c.DataDir == "" {
		return "."
	}
	return c.DataDir
}

// Main is a running platform.
type Main struct {
	Config  Config
	Log     *slog.Logger
	DB      *sqlstore.DB
	Blobs   *blob.Dir
	Service *service.Service
	API     *api.Server
	Web     *web.Server
	HTTP    *http.Server
	ln      net.Listener
}

// Open connects to the database, migrates it and builds the service. It does not listen yet.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (*Main, error) {
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	}
	db, err := sqlstore.Open(ctx, cfg.DatabaseURLOrDefault(), sqlstore.Options{Synchronous: cfg.Synchronous})
	if err != nil {
		return nil, err
	}
	n, err := db.Migrate(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	log.Info("database ready", "engine", db.Engine, "migrations_applied", n)
	blobs, err := blob.NewDir(filepath.Join(cfg.dataDir(), "blobs"))
	if err != nil {
		db.Close()
		return nil, err
	}
	adapterOpts := adapters.Options{DenyPrivateNetworks: cfg.DenyPrivateModelURLs}
	resolver := NewResolver(blobs, adapters.NewCache(adapters.DefaultRegistry(adapterOpts)))
	svc := service.New(sqlstore.NewStore(db), resolver, log)
	checkReg := adapters.DefaultRegistry(adapterOpts)
	svc.CheckModel = func(ctx context.Context, m *dynabench.Model) error {
		spec, err := resolver.Spec(ctx, m.TaskID)
		if err != nil {
			return err
		}
		_, err = checkReg.New(ctx, m, spec)
		return err
	}
	resolver.Spec = func(ctx context.Context, taskID int64) (adapters.Spec, error) {
		t, err := svc.Store.FindTaskByID(ctx, taskID)
		if err != nil {
			return adapters.Spec{}, err
		}
		cfg, err := svc.Config(t)
		if err != nil {
			return adapters.Spec{}, err
		}
		return adapters.SpecFor(cfg), nil
	}
	svc.ReleaseDir = filepath.Join(cfg.dataDir(), "releases")
	if cfg.JobLease > 0 {
		svc.JobLease = cfg.JobLease
	}
	svc.Trainer = &service.Trainer{Blobs: blobs, SeedData: demoSeed, Version: cfg.Version}
	if cfg.InsecureFastHashing {
		svc.PasswordParams = secret.TestParams
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ready := func(ctx context.Context) error {
		if err := db.Ping(ctx); err != nil {
			return err
		}
		ok, err := db.SchemaCurrent(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("schema not current")
		}
		return nil
	}
	// One pair of limiters for the API and the pages: a password guess counts wherever it comes from.
	loginLimit, registerLimit := ratelimit.New(10, time.Minute), ratelimit.New(5, time.Minute)
	a := api.New(svc, log, api.Options{Version: cfg.Version, Ready: ready, Registry: reg, Login: loginLimit, Register: registerLimit,
		OpenRegistration: cfg.OpenRegistration, TrustProxy: cfg.TrustProxy})
	pages, err := web.New(svc, log, web.Options{OpenRegistration: cfg.OpenRegistration, TrustProxy: cfg.TrustProxy, Version: cfg.Version,
		Login: loginLimit, Register: registerLimit})
	if err != nil {
		db.Close()
		return nil, err
	}
	m := &Main{Config: cfg, Log: log, DB: db, Blobs: blobs, Service: svc, API: a, Web: pages}
	if err := m.Bootstrap(ctx); err != nil {
		m.Close()
		return nil, err
	}
	m.warmModels(ctx)
	return m, nil
}

// warmModels loads every model in the loop of a current round before the server says it is ready,
// so the first annotators do not wait for a built-in model to train. A model that fails here is
// only logged: examples against it are still stored, with the model's error.
func (m *Main) warmModels(ctx context.Context) {
	start := time.Now()
	tasks, err := m.Service.Store.FindTasks(ctx)
	if err != nil {
		m.Log.Warn("warm models", "err", err)
		return
	}
	n := 0
	for _, t := range tasks {
		r, err := m.Service.Store.FindRound(ctx, t.ID, t.CurrentRound)
		if err != nil {
			continue
		}
		for _, id := range r.ModelIDs {
			model, err := m.Service.Store.FindModelByID(ctx, id)
			if err != nil {
				continue
			}
			if _, err := m.Service.Models.Predictor(ctx, model); err != nil {
				m.Log.Warn("model in the loop is not available", "task", t.Code, "model", model.Name, "err", err)
				continue
			}
			n++
		}
	}
	m.Log.Info("models in the loop ready", "models", n, "duration_ms", time.Since(start).Milliseconds())
}

// Listen binds the address (":0" picks a free port; see URL).
func (m *Main) Listen() error {
	ln, err := net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return err
	}
	m.ln = ln
	m.HTTP = &http.Server{
		Handler:           m.Handler(),
		ReadHeaderTimeout: orDefault(m.Config.ReadHeaderTimeout, 10*time.Second), // slow-header clients cannot hold connections
		ReadTimeout:       orDefault(m.Config.ReadTimeout, 60*time.Second),
		WriteTimeout:      orDefault(m.Config.WriteTimeout, 90*time.Second),
		IdleTimeout:       orDefault(m.Config.IdleTimeout, 120*time.Second),
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn),
	}
	return nil
}

// URL is the base URL the server listens on.
func (m *Main) URL() string {
	addr := m.ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return fmt.Sprintf("http://%s", net.JoinHostPort(host, fmt.Sprint(addr.Port)))
}

// Serve serves until ctx ends, then shuts down gracefully: in-flight requests finish (up to 20 s).
func (m *Main) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- m.HTTP.Serve(m.ln) }()
	wctx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	workers := m.startWorkers(wctx)
	defer workers.Wait()
	m.Log.Info("serving", "url", m.URL())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m.Log.Info("shutting down")
	if err := m.HTTP.Shutdown(sctx); err != nil {
		return err
	}
	return nil
}

// startWorkers runs the in-process evaluation workers until ctx ends.
func (m *Main) startWorkers(ctx context.Context) *sync.WaitGroup {
	var wg sync.WaitGroup
	n := m.Config.Workers
	host, _ := os.Hostname()
	// The platform's own jobs (the retraining cycle) always run here: remote workers only evaluate.
	if !m.Config.NoPlatformJobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.Service.RunJobs(ctx, fmt.Sprintf("%s:%d/jobs", host, os.Getpid()))
		}()
	}
	for i := range max(n, 0) {
		w := &worker.Worker{
			Source:     &worker.Local{Service: m.Service, Name: fmt.Sprintf("%s:%d/in-process-%d", host, os.Getpid(), i+1)},
			Predictors: worker.LocalPredictors(m.Service.Models),
			Log:        m.Log,
			Wake:       m.Service.JobsReady(),
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Run(ctx)
		}()
	}
	return &wg
}

// Close releases the database and the blob store.
func (m *Main) Close() error {
	berr := m.Blobs.Close()
	if err := m.DB.Close(); err != nil {
		return err
	}
	return berr
}
