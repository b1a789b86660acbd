package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/demo"
	"github.com/dynabench-go/dynabench/internal/service"
)

// Bootstrap prepares an empty database: the admin account and, when enabled, the demo tasks with
// their contexts and a built-in model in the loop of round 1. It does nothing on a database that has
// users (or tasks), so restarts are safe.
func (m *Main) Bootstrap(ctx context.Context) error {
	n, err := m.Service.Store.CountUsers(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	password := m.Config.AdminPassword
	generated := password == ""
	if generated {
		b := make([]byte, 12)
		rand.Read(b)
		password = base64.RawURLEncoding.EncodeToString(b)
	}
	admin, err := m.Service.CreateUser(ctx, "admin", "admin@localhost", password, true)
	if err != nil {
		return fmt.Errorf("create admin: %w", err)
	}
	if generated {
		// Printed once, on the first start only; it is not stored anywhere in clear.
		m.Log.Warn("created the admin account with a generated password; change it or set DYNABENCH_ADMIN_PASSWORD",
			"username", "admin", "password", password)
	} else {
		m.Log.Info("created the admin account", "username", "admin")
	}
	if !m.Config.Demo {
		return nil
	}
	return SeedDemo(ctx, m.Service, admin)
}

// demoDev renders the held-out seed examples as an evaluation dataset: the model's input fields
// and the gold target under the config's target field.
func demoDev(svc *service.Service, t *dynabench.Task, dt demo.Task) (*bytes.Buffer, error) {
	cfg, err := svc.Config(t)
	if err != nil {
		return nil, err
	}
	f, ok := cfg.PrimaryTarget()
	if !ok {
		return nil, fmt.Errorf("demo task %s has no target field", dt.Code)
	}
	target := f.Name
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	_, dev := dt.TrainDev()
	for i, e := range dev {
		row := map[string]any{"uid": fmt.Sprintf("dev-%d", i+1)}
		for k, v := range e.Input {
			row[k] = v
		}
		row[target] = e.Label
		if err := enc.Encode(row); err != nil {
			return nil, err
		}
	}
	return &buf, nil
}

// SeedDemo creates the four demo tasks owned by admin, each with its contexts in round 1, a built-in
// model trained on most of the task's seed set in the loop, and the rest as a scoring dataset.
func SeedDemo(ctx context.Context, svc *service.Service, admin *dynabench.User) error {
	tasks, err := demo.Tasks()
	if err != nil {
		return err
	}
	for _, dt := range tasks {
		t, _, err := svc.CreateTask(ctx, admin, service.NewTask{Code: dt.Code, Name: dt.Name, Description: dt.Description,
			ConfigSource: string(dt.Config)})
		if err != nil {
			return fmt.Errorf("demo task %s: %w", dt.Code, err)
		}
		var jsonl bytes.Buffer
		enc := json.NewEncoder(&jsonl)
		for _, c := range dt.Contexts {
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		if _, err := svc.UploadContexts(ctx, admin, t.Code, 1, &jsonl); err != nil {
			return fmt.Errorf("demo contexts %s: %w", dt.Code, err)
		}
		model := &dynabench.Model{TaskID: t.ID, UserID: admin.ID, Name: dt.Code + "-builtin-r1", Kind: dynabench.KindBuiltin,
			Options: map[string]any{"demo": dt.Code, "seed": 1}, Published: true,
			Card: "Built-in baseline: hashed n-gram logistic regression (span scorer for QA), trained on the demo seed set less its demo-dev examples."}
		if err := svc.Store.CreateModel(ctx, model); err != nil {
			return err
		}
		if _, err := svc.SetRoundModels(ctx, admin, t.Code, 1, []int64{model.ID}, ""); err != nil {
			return err
		}
		prior := &dynabench.Model{TaskID: t.ID, UserID: admin.ID, Name: dt.Code + "-prior-baseline", Kind: dynabench.KindBuiltin,
			Options: map[string]any{"demo": dt.Code, "baseline": "prior"}, Published: true,
			Card: "Trivial baseline for scale: the most frequent training label (the context's first five words for QA)."}
		if err := svc.Store.CreateModel(ctx, prior); err != nil {
			return err
		}
		// The seed examples the model did not learn from become a scoring dataset; uploading it
		// queues the model's evaluation, so the leaderboard has a row once a worker ran it.
		dev, err := demoDev(svc, t, dt)
		if err != nil {
			return err
		}
		if _, err := svc.UploadDataset(ctx, admin, t.Code, service.NewDataset{Name: "demo-dev", Access: dynabench.AccessScoring, Body: dev}); err != nil {
			return fmt.Errorf("demo dataset %s: %w", dt.Code, err)
		}
	}
	return nil
}
