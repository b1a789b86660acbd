package simulate

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// TestCycleOverAPI runs a small retraining cycle (two rounds on the sentiment demo task) against the
// real server: annotators over the HTTP API, rounds closed and released, models trained on the released
// train splits, put in the loop and evaluated on every round's test split.
func TestCycleOverAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and trains two models")
	}
	s := servertest.Start(t, sqlstoretest.Engines()[0])
	c := NewClient(s.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var writers, validators []string
	for i := range 2 {
		writers = append(writers, s.User(t, fmt.Sprintf("writer%d", i)).Token)
	}
	for i := range 3 {
		validators = append(validators, s.User(t, fmt.Sprintf("validator%d", i)).Token)
	}
	var progress bytes.Buffer
	rep, err := Cycle(ctx, c, CyclePlan{Task: "sentiment", Rounds: 2, Writers: 2, ExamplesPerWriter: 20, Validators: 3, Seed: 3,
		MislabelRate: 0.05, OwnerToken: s.AdminToken, WriterTokens: writers, ValidatorTokens: validators, Split: Split{Train: 0.5, Dev: 0.1, Test: 0.4},
		Poll: 100 * time.Millisecond, EvalTimeout: time.Minute, Progress: &progress})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rounds) != 2 || len(rep.Models) != 3 || len(rep.Datasets) != 2 || rep.Metric != "macro_f1" {
		t.Fatalf("report: %d rounds, %d models, datasets %v, metric %s", len(rep.Rounds), len(rep.Models), rep.Datasets, rep.Metric)
	}
	for i, rd := range rep.Rounds {
		st, sv := rd.Stats, rd.Server
		if st.Submitted != 40 || sv.Collected != st.Submitted || sv.Fooled != st.Fooled || sv.VerifiedFooled != st.VerifiedFooled {
			t.Errorf("round %d: simulator %+v, server %+v", rd.Round, *st, sv)
		}
		if st.VerifiedFooled == 0 || rd.Release.Dataset != fmt.Sprintf("round-%d-test", i+1) || rd.Release.Splits["test"] == 0 {
			t.Errorf("round %d: %d verified fooled, release %+v", rd.Round, st.VerifiedFooled, rd.Release)
		}
		if rd.Models[0] != rep.Models[i].ID {
			t.Errorf("round %d: models in the loop %v, report row %+v", rd.Round, rd.Models, rep.Models[i])
		}
	}
	for _, m := range rep.Models {
		for _, d := range append(rep.Datasets, "demo-dev") {
			sc, ok := rep.Scores[m.ID][d]
			if !ok || sc.Accuracy < 0 || sc.Accuracy > 100 || sc.MacroF1 < 0 || sc.MacroF1 > 100 {
				t.Errorf("model %s (%s) on %s: %+v present %v", m.ID, m.Name, d, sc, ok)
			}
		}
	}
	var md bytes.Buffer
	rep.Markdown(&md)
	if !strings.Contains(md.String(), "round-2-test") || !strings.Contains(md.String(), "| r3: sentiment-sim3-r3") {
		t.Errorf("markdown:\n%s", md.String())
	}
	t.Logf("\n%s", md.String())
	// The cycle starts on a fresh task only.
	if _, err := Cycle(ctx, c, CyclePlan{Task: "sentiment", Rounds: 1, Writers: 1, ExamplesPerWriter: 1, Validators: 1,
		OwnerToken: s.AdminToken, WriterTokens: writers, ValidatorTokens: validators}); err == nil || !strings.Contains(err.Error(), "fresh task") {
		t.Errorf("a second cycle on the same task: %v", err)
	}
	s.NoDrift(t)
}
