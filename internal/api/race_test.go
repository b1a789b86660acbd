package api_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
)

// TestDecidingVoteRace: two validators send the deciding vote at the same moment. Exactly one is
// counted and resolves the example; the other gets 409; the counters move once and match a recount.
// Two variants: both racers agree (correct), and the racers disagree after a 2–2 tie, so the race
// decides between verified and rejected.
func TestDecidingVoteRace(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		for _, name := range []string{"frank", "gina"} {
			u := e.User(t, name)
			e.users[name], e.tokens[name] = u, u.Token
		}
		e.newTask(t, "race", sentimentConfig, nil, servertest.Says("positive", sentimentLabels...), 1)
		const rounds = 20
		var verified, rejected int64
		for i := range rounds {
			tie := i%2 == 1
			id := e.example(t, "alice", "race", "race.c1", fmt.Sprintf("Race statement %d.", i), "negative")
			path := "/api/v1/examples/" + id + "/validations"
			prior := []struct{ who, label string }{{"bob", "correct"}, {"carol", "correct"}}
			racers := [2]struct{ who, label string }{{"frank", "correct"}, {"gina", "correct"}}
			if tie {
				prior = append(prior, struct{ who, label string }{"dave", "incorrect"}, struct{ who, label string }{"erin", "incorrect"})
				racers[1].label = "incorrect"
			}
			for _, p := range prior {
				e.mustCall(t, http.StatusCreated, http.MethodPost, path, p.who, vote(p.label))
			}
			var wg sync.WaitGroup
			var res [2]*servertest.Response
			var errs [2]error
			start := make(chan struct{})
			for j, r := range racers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					res[j], errs[j] = e.DoAsync(http.MethodPost, path, e.tokens[r.who], vote(r.label))
				}()
			}
			close(start)
			wg.Wait()
			for j := range errs {
				if errs[j] != nil {
					t.Fatalf("iteration %d: racer %d: %v", i, j, errs[j])
				}
			}
			winner := -1
			for j, r := range res {
				switch r.Status {
				case http.StatusCreated:
					if winner >= 0 {
						t.Errorf("iteration %d: both deciding votes were accepted", i)
					}
					winner = j
				case http.StatusConflict:
				default:
					t.Errorf("iteration %d: racer %d: status %d %s", i, j, r.Status, r.Body)
				}
			}
			if winner < 0 {
				t.Fatalf("iteration %d: no deciding vote was accepted", i)
			}
			want := "verified"
			if racers[winner].label == "incorrect" {
				want = "rejected"
			}
			got := e.mustCall(t, http.StatusOK, http.MethodGet, "/api/v1/examples/"+id, "alice", nil)
			if s := got.String("example.status"); s != want {
				t.Errorf("iteration %d: %s won with %s, example is %s", i, racers[winner].who, racers[winner].label, s)
			}
			wantCorrect, wantIncorrect := int64(2), int64(0)
			if tie {
				wantIncorrect = 2
			}
			if racers[winner].label == "correct" {
				wantCorrect++
			} else {
				wantIncorrect++
			}
			if c, n := got.Int(t, "example.validations.correct"), got.Int(t, "example.validations.incorrect"); c != wantCorrect || n != wantIncorrect {
				t.Errorf("iteration %d: votes %d correct, %d incorrect; want %d, %d", i, c, n, wantCorrect, wantIncorrect)
			}
			if want == "verified" {
				verified++
			} else {
				rejected++
			}
		}
		e.WantStats(t, "race", 1, rounds, rounds, verified, rejected)
		// Every validator's count is the votes that were accepted.
		total := int64(0)
		for _, name := range []string{"bob", "carol", "dave", "erin", "frank", "gina"} {
			total += e.mustCall(t, http.StatusOK, http.MethodGet, "/api/v1/me", name, nil).Int(t, "totals.validations")
		}
		if want := int64(rounds*2 + rounds/2*2 + rounds); total != want {
			t.Errorf("validators counted %d votes, want %d", total, want)
		}
	})
}

// TestConcurrentExamples: many examples at once, some past the daily cap: every accepted example is
// counted once, the cap holds exactly, and nothing else fails.
func TestConcurrentExamples(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		e.newTask(t, "busy", sentimentConfig, map[string]any{"max_examples_per_day": 6}, servertest.Says("positive", sentimentLabels...), 3)
		const perUser = 10
		users := []string{"alice", "bob", "carol"}
		var wg sync.WaitGroup
		var mu sync.Mutex
		accepted := map[string]int{}
		fooled := 0
		for _, who := range users {
			for i := range perUser {
				wg.Add(1)
				go func() {
					defer wg.Done()
					l := sentimentLabels[i%3]
					r, err := e.DoAsync(http.MethodPost, "/api/v1/tasks/busy/examples", e.tokens[who], map[string]any{
						"context_id": e.vars[fmt.Sprintf("busy.c%d", i%3+1)], "input": map[string]any{"statement": fmt.Sprint(who, i), "label": l}})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err != nil:
						t.Errorf("%s %d: %v", who, i, err)
					case r.Status == http.StatusCreated:
						accepted[who]++
						if l != "positive" {
							fooled++
						}
					case r.Status != http.StatusTooManyRequests:
						t.Errorf("%s %d: %d %s", who, i, r.Status, r.Body)
					}
				}()
			}
		}
		wg.Wait()
		for _, who := range users {
			if accepted[who] != 6 {
				t.Errorf("%s: %d examples accepted, want the cap of 6", who, accepted[who])
			}
		}
		e.WantStats(t, "busy", 1, 18, int64(fooled), 0, 0)
	})
}
