package training_test

import (
	"context"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/demo"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
	"github.com/dynabench-go/dynabench/internal/training"
)

var ctx = context.Background()

// fixedNow is the training clock in tests that compare whole files.
var fixedNow = func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func demoTask(t testing.TB, code string) demo.Task {
	t.Helper()
	tasks, err := demo.Tasks()
	must(t, err)
	for _, task := range tasks {
		if task.Code == code {
			return task
		}
	}
	t.Fatalf("no demo task %q", code)
	return demo.Task{}
}

func parseConfig(t testing.TB, src []byte) *taskconfig.Config {
	t.Helper()
	cfg, rep := taskconfig.Parse(src)
	if !rep.OK() {
		t.Fatalf("config: %v", rep.Problems)
	}
	return cfg
}

// seedData is a demo task's config and its seed set as a dataset.
func seedData(t testing.TB, code string) (*taskconfig.Config, training.Dataset) {
	t.Helper()
	task := demoTask(t, code)
	cfg := parseConfig(t, task.Config)
	src, err := training.SeedSource("seed:"+code, cfg, task.Seed)
	must(t, err)
	return cfg, training.Dataset{Sources: []training.Source{src}}
}

// storeEnv is a fresh SQLite store with a user and a demo task in it, for tests that read rounds.
type storeEnv struct {
	store *sqlstore.Store
	user  *dynabench.User
	task  *dynabench.Task
	cfg   *taskconfig.Config
}

func newStoreEnv(t testing.TB, code string) *storeEnv {
	t.Helper()
	s := sqlstore.NewStore(sqlstoretest.Open(t, sqlstore.SQLite))
	u := &dynabench.User{Username: "owner", Email: "owner@example.org", PasswordHash: "$argon2id$x"}
	must(t, s.CreateUser(ctx, u))
	dt := demoTask(t, code)
	task := &dynabench.Task{Code: code, Name: dt.Name, ConfigSource: string(dt.Config)}
	must(t, s.CreateTask(ctx, task))
	return &storeEnv{store: s, user: u, task: task, cfg: parseConfig(t, dt.Config)}
}

// round creates the task's next round.
func (e *storeEnv) round(t testing.TB) *dynabench.Round {
	t.Helper()
	rounds, err := e.store.FindRounds(ctx, e.task.ID)
	must(t, err)
	r := &dynabench.Round{TaskID: e.task.ID, Number: len(rounds) + 1, Secret: "s"}
	must(t, e.store.CreateRound(ctx, r))
	return r
}

// written is one example as an annotator wrote it.
type written struct {
	context map[string]any
	input   map[string]any
	status  string
}

// write stores examples in the round, each on its own context, in one transaction.
func (e *storeEnv) write(t testing.TB, r *dynabench.Round, rows []written) []*dynabench.Example {
	t.Helper()
	var out []*dynabench.Example
	must(t, e.store.InTx(ctx, func(tx dynabench.Store) error {
		for _, w := range rows {
			c := &dynabench.Context{TaskID: e.task.ID, RoundID: r.ID, Data: w.context}
			if err := tx.CreateContexts(ctx, []*dynabench.Context{c}); err != nil {
				return err
			}
			ex := &dynabench.Example{TaskID: e.task.ID, RoundID: r.ID, ContextID: c.ID, UserID: e.user.ID,
				Input: w.input, ModelWrong: new(true), Status: w.status}
			if err := tx.CreateExample(ctx, ex); err != nil {
				return err
			}
			out = append(out, ex)
		}
		return nil
	}))
	return out
}
