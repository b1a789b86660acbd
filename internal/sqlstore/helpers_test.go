package sqlstore_test

// The conformance suite of dynabench.Store: every test runs once per engine (SQLite always,
// PostgreSQL when DYNABENCH_TEST_POSTGRES_URL is set), each on a fresh migrated database.
// This file holds the harness and the builders the tests share.

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// testNow is the store's clock in every test: not UTC and finer than a millisecond, so round trips
// prove that times come back as UTC milliseconds.
var testNow = time.Date(2026, 3, 14, 15, 9, 26, 535_897_932, time.FixedZone("CET", 3600))

// millis is t as the store returns it: truncated to the millisecond, in UTC.
func millis(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

// env is one engine's fresh database with the store over it.
type env struct {
	engine string
	db     *sqlstore.DB
	s      *sqlstore.Store
	seq    int // suffix for unique names
}

// forEachEngine runs fn on a fresh database of every configured engine, as parallel subtests.
func forEachEngine(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			db := sqlstoretest.Open(t, engine)
			db.Now = func() time.Time { return testNow }
			fn(t, &env{engine: engine, db: db, s: sqlstore.NewStore(db)})
		})
	}
}

var ctx = context.Background()

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantCode fails unless err carries the domain error code.
func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if !dynabench.IsCode(err, code) {
		t.Fatalf("error = %v (code %q), want code %q", err, dynabench.ErrorCode(err), code)
	}
}

// wantEqual fails unless got and want are deeply equal.
func wantEqual(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %+v\n want %+v", what, deref(got), deref(want))
	}
}

// deref prints pointers to structs by value.
func deref(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return rv.Elem().Interface()
	}
	return v
}

func boolp(b bool) *bool           { return &b }
func int64p(n int64) *int64        { return &n }
func timep(t time.Time) *time.Time { return &t }

// count runs a raw count query (a check no Store method offers).
func (e *env) count(t testing.TB, query string, args ...any) int64 {
	t.Helper()
	n, err := e.db.CountRaw(ctx, query, args...)
	must(t, err)
	return n
}

// exec runs a raw statement, to inject what the store would never write.
func (e *env) exec(t testing.TB, query string, args ...any) {
	t.Helper()
	must(t, e.db.ExecRaw(ctx, query, args...))
}

func (e *env) name(prefix string) string {
	e.seq++
	return fmt.Sprintf("%s%d", prefix, e.seq)
}

func (e *env) user(t testing.TB) *dynabench.User {
	t.Helper()
	name := e.name("user")
	u := &dynabench.User{Username: name, Email: name + "@example.org", PasswordHash: "$argon2id$x"}
	must(t, e.s.CreateUser(ctx, u))
	return u
}

func (e *env) task(t testing.TB) *dynabench.Task {
	t.Helper()
	tk := &dynabench.Task{Code: e.name("task"), Name: "Task", ConfigSource: "context: []"}
	must(t, e.s.CreateTask(ctx, tk))
	return tk
}

func (e *env) model(t testing.TB, taskID, userID int64) *dynabench.Model {
	t.Helper()
	m := &dynabench.Model{TaskID: taskID, UserID: userID, Name: e.name("model"), Kind: dynabench.KindBuiltin}
	must(t, e.s.CreateModel(ctx, m))
	return m
}

// round creates the task's next round.
func (e *env) round(t testing.TB, tk *dynabench.Task) *dynabench.Round {
	t.Helper()
	rounds, err := e.s.FindRounds(ctx, tk.ID)
	must(t, err)
	r := &dynabench.Round{TaskID: tk.ID, Number: len(rounds) + 1, Secret: "s"}
	must(t, e.s.CreateRound(ctx, r))
	return r
}

// contexts creates n contexts in the round with the tag.
func (e *env) contexts(t testing.TB, r *dynabench.Round, n int, tag string) []*dynabench.Context {
	t.Helper()
	cs := make([]*dynabench.Context, n)
	for i := range cs {
		cs[i] = &dynabench.Context{TaskID: r.TaskID, RoundID: r.ID, Tag: tag, Data: map[string]any{"context": e.name("c")}}
	}
	must(t, e.s.CreateContexts(ctx, cs))
	return cs
}

// submit writes an example the way the rules do: the row and its contribution to the counters in
// one transaction. wrong nil means the model's answer is unknown.
func (e *env) submit(t testing.TB, c *dynabench.Context, u *dynabench.User, wrong *bool) *dynabench.Example {
	t.Helper()
	ex := &dynabench.Example{TaskID: c.TaskID, RoundID: c.RoundID, ContextID: c.ID, UserID: u.ID,
		Input: map[string]any{"hypothesis": e.name("h")}, ModelWrong: wrong}
	must(t, e.s.InTx(ctx, func(tx dynabench.Store) error {
		if err := tx.CreateExample(ctx, ex); err != nil {
			return err
		}
		return tx.ApplyStats(ctx, ex, dynabench.Contribution(ex))
	}))
	return ex
}

// change applies edit to the locked example and moves the counters by the change in its
// contribution, as the rules do.
func (e *env) change(t testing.TB, id int64, edit func(*dynabench.Example)) *dynabench.Example {
	t.Helper()
	var out *dynabench.Example
	must(t, e.s.InTx(ctx, func(tx dynabench.Store) error {
		ex, err := tx.LockExample(ctx, id)
		if err != nil {
			return err
		}
		before := dynabench.Contribution(ex)
		edit(ex)
		if err := tx.UpdateExample(ctx, ex); err != nil {
			return err
		}
		out = ex
		return tx.ApplyStats(ctx, ex, dynabench.Contribution(ex).Sub(before))
	}))
	return out
}

func (e *env) setStatus(t testing.TB, id int64, status string) *dynabench.Example {
	t.Helper()
	return e.change(t, id, func(ex *dynabench.Example) { ex.Status = status })
}

// validate records a vote the way the rules do: the validation, the example's counts (user mode)
// and the validator's counter, in one transaction.
func (e *env) validate(t testing.TB, exampleID int64, u *dynabench.User, label, mode string) {
	t.Helper()
	must(t, e.s.InTx(ctx, func(tx dynabench.Store) error {
		ex, err := tx.LockExample(ctx, exampleID)
		if err != nil {
			return err
		}
		if err := tx.CreateValidation(ctx, &dynabench.Validation{ExampleID: ex.ID, UserID: u.ID, Label: label, Mode: mode}); err != nil {
			return err
		}
		if mode == dynabench.ModeUser {
			switch label {
			case dynabench.LabelCorrect:
				ex.Counts.Correct++
			case dynabench.LabelIncorrect:
				ex.Counts.Incorrect++
			case dynabench.LabelFlagged:
				ex.Counts.Flagged++
			}
			if err := tx.UpdateExample(ctx, ex); err != nil {
				return err
			}
		}
		return tx.CountValidation(ctx, ex.RoundID, u.ID)
	}))
}

// noDrift fails unless the stored counters equal a recount of the rows.
func (e *env) noDrift(t testing.TB) {
	t.Helper()
	drift, err := e.s.Recount(ctx)
	must(t, err)
	if len(drift) != 0 {
		t.Fatalf("drift after consistent writes: %+v", drift)
	}
}

// sortDrift orders drift for comparison (Recount does not promise an order).
func sortDrift(d []dynabench.Drift) []dynabench.Drift {
	slices.SortFunc(d, func(a, b dynabench.Drift) int {
		return strings.Compare(a.Table+" "+a.Key+" "+a.Counter, b.Table+" "+b.Key+" "+b.Counter)
	})
	return d
}

func ids[T any](xs []T, id func(T) int64) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = id(x)
	}
	return out
}
