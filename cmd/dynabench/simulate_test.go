package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// TestSimulateCommand runs `dynabench simulate` for one short round of the sentiment task against a
// real server: it registers its annotators, writes, validates, releases, retrains and prints tables.
func TestSimulateCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and trains a model")
	}
	s := servertest.Start(t, sqlstoretest.Engines()[0])
	cmd := simulateCmd()
	var out, progress bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&progress)
	cmd.SetArgs([]string{"--server", s.URL, "--admin-password", servertest.AdminPassword, "--task", "sentiment",
		"--rounds", "1", "--writers", "1", "--examples", "30", "--validators", "2", "--seed", "5", "--split", "0.5,0.1,0.4"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("simulate: %v\nprogress:\n%s", err, progress.String())
	}
	for _, want := range []string{"round 1: 30 written", "round 1 released"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	for _, want := range []string{"### sentiment", "| r1: sentiment-builtin-r1 (seed) |", "| r2: sentiment-sim5-r2", "round-1-test"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	cmd = simulateCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&progress)
	cmd.SetArgs([]string{"--server", s.URL, "--task", "qa"})
	if err := cmd.ExecuteContext(ctx); err == nil {
		t.Error("simulate without the admin password, on qa, succeeded")
	}
}
