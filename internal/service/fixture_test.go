package service

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/secret"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// testConfig is a three-label exact_match task; the model sees the context and the statement.
const testConfig = `
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
metadata:
  create:
  - name: model_explanation_wrong
    type: string
    model_wrong_condition: true
`

// fakeModel answers with answer(ctx, input) and records what it was asked.
type fakeModel struct {
	answer func(ctx context.Context, input map[string]any) (map[string]any, error)
	mu     sync.Mutex
	inputs []map[string]any
	ctxs   []context.Context
}

func (f *fakeModel) Predict(ctx context.Context, input map[string]any) (map[string]any, error) {
	f.mu.Lock()
	f.inputs = append(f.inputs, maps.Clone(input))
	f.ctxs = append(f.ctxs, ctx)
	f.mu.Unlock()
	return f.answer(ctx, input)
}

func (f *fakeModel) PredictBatch(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	return nil, fmt.Errorf("not used")
}

func says(out map[string]any) *fakeModel {
	return &fakeModel{answer: func(context.Context, map[string]any) (map[string]any, error) { return maps.Clone(out), nil }}
}

func label(l string) map[string]any { return map[string]any{"label": l} }

// fakeResolver hands out fake models by model id, or fails to resolve.
type fakeResolver struct {
	mu     sync.Mutex
	models map[int64]dynabench.Predictor
	errs   map[int64]error
}

func (r *fakeResolver) Predictor(_ context.Context, m *dynabench.Model) (dynabench.Predictor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.errs[m.ID]; err != nil {
		return nil, err
	}
	p, ok := r.models[m.ID]
	if !ok {
		return nil, fmt.Errorf("no fake for model %d", m.ID)
	}
	return p, nil
}

// fixture is a Service over a fresh database with an admin, users, and task "tk" whose round 1 has
// contexts and a model in the loop.
type fixture struct {
	svc      *Service
	store    dynabench.Store
	models   *fakeResolver
	admin    *dynabench.User
	users    map[string]*dynabench.User
	task     *dynabench.Task
	contexts []*dynabench.Context
	modelID  int64
	log      *bytes.Buffer

	clockMu sync.Mutex
	now     time.Time
}

func forEachEngine(t *testing.T, fn func(t *testing.T, engine string)) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, engine)
		})
	}
}

func newFixture(t *testing.T, engine string, settings dynabench.TaskSettings, model dynabench.Predictor) *fixture {
	t.Helper()
	ctx := context.Background()
	db := sqlstoretest.Open(t, engine)
	f := &fixture{store: sqlstore.NewStore(db), models: &fakeResolver{models: map[int64]dynabench.Predictor{}, errs: map[int64]error{}},
		users: map[string]*dynabench.User{}, log: &bytes.Buffer{}, now: time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)}
	f.svc = New(f.store, f.models, slog.New(slog.NewTextHandler(&lockedBuffer{b: f.log}, nil)))
	f.svc.PasswordParams = secret.TestParams
	f.svc.Now = f.clock
	var err error
	if f.admin, err = f.svc.CreateUser(ctx, "admin", "admin@example.com", "adminpass123", true); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "bob", "carol", "dave", "erin", "frank", "gina"} {
		if f.users[name], err = f.svc.CreateUser(ctx, name, name+"@example.com", "password-"+name, false); err != nil {
			t.Fatal(err)
		}
	}
	if f.task, _, err = f.svc.CreateTask(ctx, f.admin, NewTask{Code: "tk", Name: "T", ConfigSource: testConfig, Settings: settings}); err != nil {
		t.Fatal(err)
	}
	var jsonl bytes.Buffer
	for i := range 3 {
		fmt.Fprintf(&jsonl, `{"context":{"context":"Context number %d."},"tag":"tag%d"}`+"\n", i, i)
	}
	if n, err := f.svc.UploadContexts(ctx, f.admin, "tk", 1, &jsonl); err != nil || n != 3 {
		t.Fatalf("upload: %d, %v", n, err)
	}
	for i := range 3 {
		c, err := f.svc.PickContext(ctx, f.admin, "tk", "", fmt.Sprintf("tag%d", i))
		if err != nil {
			t.Fatal(err)
		}
		f.contexts = append(f.contexts, c)
	}
	if model != nil {
		f.modelID = f.addModel(t, model)
		f.setModels(t, f.modelID)
	}
	return f
}

type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (f *fixture) clock() time.Time {
	f.clockMu.Lock()
	defer f.clockMu.Unlock()
	return f.now
}

func (f *fixture) advance(d time.Duration) {
	f.clockMu.Lock()
	f.now = f.now.Add(d)
	f.clockMu.Unlock()
}

// addModel registers a model of the task answered by p.
func (f *fixture) addModel(t *testing.T, p dynabench.Predictor) int64 {
	t.Helper()
	m := &dynabench.Model{TaskID: f.task.ID, UserID: f.admin.ID, Name: fmt.Sprintf("fake-%d", len(f.models.models)+1), Kind: dynabench.KindDynalab}
	if err := f.store.CreateModel(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	f.models.mu.Lock()
	f.models.models[m.ID] = p
	f.models.mu.Unlock()
	return m.ID
}

func (f *fixture) setModels(t *testing.T, ids ...int64) {
	t.Helper()
	if _, err := f.svc.SetRoundModels(context.Background(), f.admin, "tk", 1, ids, ""); err != nil {
		t.Fatal(err)
	}
}

// create submits an example by user on context i, failing t on error.
func (f *fixture) create(t *testing.T, user string, i int, statement, lbl string) *dynabench.Example {
	t.Helper()
	e, err := f.svc.CreateExample(context.Background(), f.users[user], "tk", NewExample{ContextID: f.contexts[i].ID,
		Input: map[string]any{"statement": statement, "label": lbl}})
	if err != nil {
		t.Fatalf("create example: %v", err)
	}
	return e
}

// stats reads round 1's counters from the store.
func (f *fixture) stats(t *testing.T) dynabench.RoundStats {
	t.Helper()
	r, err := f.store.FindRound(context.Background(), f.task.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	return r.Stats
}

// wantStats checks round 1's counts and that a recount agrees with every stored counter.
func (f *fixture) wantStats(t *testing.T, collected, fooled, verifiedFooled, rejected int64) {
	t.Helper()
	got := f.stats(t)
	if got.Collected != collected || got.Fooled != fooled || got.VerifiedFooled != verifiedFooled || got.Rejected != rejected {
		t.Errorf("round stats %+v, want collected %d, fooled %d, verified_fooled %d, rejected %d",
			got, collected, fooled, verifiedFooled, rejected)
	}
	f.noDrift(t)
}

func (f *fixture) noDrift(t *testing.T) {
	t.Helper()
	drift, err := f.store.Recount(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drift {
		t.Errorf("drift: %+v", d)
	}
}

func ptr[T any](v T) *T { return &v }

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if got := dynabench.ErrorCode(err); got != code {
		t.Fatalf("error %v (code %q), want code %q", err, got, code)
	}
}
