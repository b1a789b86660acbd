package api_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// TestRoundLoopModes: with several models in the loop, "vote" takes the majority label, "random"
// asks one model per example, and a failing member of an ensemble is skipped.
func TestRoundLoopModes(t *testing.T) {
	t.Parallel()
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := servertest.Start(t, engine)
			alice := srv.User(t, "alice")
			labels := []string{"entailed", "neutral", "contradictory"}
			a := srv.AddModel(t, "nli", "says-neutral-1", servertest.Says("neutral", labels...))
			b := srv.AddModel(t, "nli", "says-neutral-2", servertest.Says("neutral", labels...))
			c := srv.AddModel(t, "nli", "says-entailed", servertest.Says("entailed", labels...))
			d := srv.AddModel(t, "nli", "broken", servertest.Fails(errors.New("boom")))
			ids := []string{itoa(a), itoa(b), itoa(c), itoa(d)}
			put := srv.Do(t, "PUT", "/api/v1/tasks/nli/rounds/1/models", srv.AdminToken, map[string]any{"models": ids, "mode": "vote"})
			if put.Status != http.StatusOK || put.String("loop_mode") != "vote" {
				t.Fatalf("put models: %d %s", put.Status, put.Body)
			}
			submit := func(label string) *servertest.Response {
				ctx := srv.Do(t, "GET", "/api/v1/tasks/nli/context", alice.Token, nil)
				return srv.Do(t, "POST", "/api/v1/tasks/nli/examples", alice.Token, map[string]any{
					"context_id": ctx.String("id"), "input": map[string]any{"hypothesis": "Someone is there.", "label": label}})
			}
			ex := submit("entailed")
			if ex.Status != http.StatusCreated {
				t.Fatalf("example: %d %s", ex.Status, ex.Body)
			}
			if got := ex.String("example.model_output.label"); got != "neutral" {
				t.Errorf("vote of neutral, neutral, entailed (and one broken) = %q, want neutral; %s", got, ex.Body)
			}
			if ex.String("example.model_wrong") != "true" {
				t.Errorf("model_wrong = %s, want true", ex.String("example.model_wrong"))
			}
			if name := ex.String("example.model_name"); name != "" {
				t.Logf("model_name %s", name)
			}
			if !strings.HasPrefix(string(ex.Body), "{") || !strings.Contains(string(ex.Body), "ensemble(vote)") {
				t.Errorf("the example does not name the ensemble: %s", ex.Body)
			}
			bad := srv.Do(t, "PUT", "/api/v1/tasks/nli/rounds/1/models", srv.AdminToken, map[string]any{"models": ids, "mode": "best"})
			if bad.Status != http.StatusUnprocessableEntity {
				t.Errorf("mode best: %d, want 422", bad.Status)
			}
			// random: each example is answered by exactly one of the models.
			srv.Do(t, "PUT", "/api/v1/tasks/nli/rounds/1/models", srv.AdminToken, map[string]any{"models": ids[:3], "mode": "random"})
			seen := map[string]bool{}
			for i := 0; i < 30; i++ {
				seen[submit("neutral").String("example.model.name")] = true
			}
			if len(seen) < 2 {
				t.Errorf("random mode used only %v over 30 examples", seen)
			}
			srv.NoDrift(t)
		})
	}
}
