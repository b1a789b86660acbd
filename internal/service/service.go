// Package service holds the rules of the adversarial loop, written once above storage: accounts,
// tasks and rounds, contexts, examples with the model in the loop, validations and statistics. Every
// rule takes the acting user explicitly (from the request's credentials, never from its body).
package service

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/secret"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// Service is the platform's rules over a Store.
type Service struct {
	Store  dynabench.Store
	Models dynabench.ModelResolver
	Log    *slog.Logger
	// Now is the clock; tests replace it.
	Now func() time.Time
	// PasswordParams are the argon2id costs for new password hashes.
	PasswordParams secret.Params
	// SessionTTL is how long a login token lives (API tokens from /me/tokens do not expire).
	SessionTTL time.Duration
	// Limits bound the size of inputs.
	Limits taskconfig.Limits
	// Trainer makes built-in models (nil: training is unavailable).
	Trainer *Trainer
	// CheckModel builds a model's adapter without calling it, to refuse bad options at registration.
	CheckModel func(ctx context.Context, m *dynabench.Model) error

	// ReleaseDir is where released rounds' files are written ("" disables releases).
	ReleaseDir string
	// JobLease is how long a worker holds a job between heartbeats (default DefaultJobLease).
	JobLease time.Duration
	// RetryBackoff is the wait before a failed job's second attempt; it grows 4× per attempt
	// (default 5 s).
	RetryBackoff time.Duration

	// jobsReady wakes in-process workers when jobs are queued.
	jobsReady chan struct{}
	// boards caches computed leaderboards (see leaderboard.go), exampleCache decoded datasets.
	boards       boardCache
	exampleCache exampleCache

	mu      sync.Mutex
	configs map[int64]cachedConfig // parsed configs by task id, checked against ConfigRev
	rng     *rand.Rand
	rngMu   sync.Mutex
	// dummyHash is verified when a login names an unknown user, so both paths cost the same.
	dummyHash string
}

type cachedConfig struct {
	rev int64
	cfg *taskconfig.Config
}

// New returns a Service with defaults filled in.
func New(store dynabench.Store, models dynabench.ModelResolver, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	s := &Service{
		Store: store, Models: models, Log: log, Now: time.Now,
		PasswordParams: secret.DefaultParams, SessionTTL: 30 * 24 * time.Hour, Limits: taskconfig.DefaultLimits,
		configs:   map[int64]cachedConfig{},
		jobsReady: make(chan struct{}, 1),
		JobLease:  DefaultJobLease, RetryBackoff: 5 * time.Second,
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x9e3779b97f4a7c15)),
	}
	return s
}

// Config returns the parsed config of the task, cached per config revision.
func (s *Service) Config(t *dynabench.Task) (*taskconfig.Config, error) {
	s.mu.Lock()
	c, ok := s.configs[t.ID]
	s.mu.Unlock()
	if ok && c.rev == t.ConfigRev {
		return c.cfg, nil
	}
	cfg, rep := taskconfig.Parse([]byte(t.ConfigSource))
	if cfg == nil || !rep.OK() {
		return nil, dynabench.Errorf(dynabench.EINTERNAL, "task %s has an invalid stored config", t.Code)
	}
	s.mu.Lock()
	s.configs[t.ID] = cachedConfig{rev: t.ConfigRev, cfg: cfg}
	s.mu.Unlock()
	return cfg, nil
}

func (s *Service) intn(n int) int {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.IntN(n)
}

// requireUser returns the actor or EUNAUTHORIZED.
func requireUser(actor *dynabench.User) error {
	if actor == nil {
		return dynabench.Errorf(dynabench.EUNAUTHORIZED, "log in or send an API token")
	}
	return nil
}

// CanOwn reports whether the actor may act as an owner of the task (task owner or admin).
func (s *Service) CanOwn(ctx context.Context, actor *dynabench.User, t *dynabench.Task) (bool, error) {
	if actor == nil {
		return false, nil
	}
	if actor.Admin {
		return true, nil
	}
	return s.Store.IsTaskOwner(ctx, t.ID, actor.ID)
}

// requireOwner returns EUNAUTHORIZED for anonymous callers and EFORBIDDEN for non-owners (ENOTFOUND
// when the task is hidden).
func (s *Service) requireOwner(ctx context.Context, actor *dynabench.User, t *dynabench.Task) error {
	if err := requireUser(actor); err != nil {
		return err
	}
	ok, err := s.CanOwn(ctx, actor, t)
	if err != nil {
		return err
	}
	if !ok {
		if t.Settings.Hidden {
			// A hidden task does not exist for non-owners: 403 here would say that it does.
			return dynabench.FieldErrorf(dynabench.ENOTFOUND, "code", "no task %q", t.Code)
		}
		return dynabench.Errorf(dynabench.EFORBIDDEN, "only the task's owners can do this")
	}
	return nil
}
