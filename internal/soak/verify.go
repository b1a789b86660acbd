package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	"github.com/dynabench-go/dynabench/internal/bench"
)

// Verify reads every acknowledged example back through the API with an admin's token, and
// returns one line per acknowledged write that is missing: an example that is gone, or fewer
// votes of a label than were acknowledged on it.
func Verify(ctx context.Context, baseURL, adminToken string, r *Report) []string {
	run := &runner{cfg: Config{BaseURL: baseURL}, hc: bench.NewClient(4)}
	defer run.hc.CloseIdleConnections()
	ids := make([]int64, 0, len(r.Examples)+len(r.Validations))
	for id := range r.Examples {
		ids = append(ids, id)
	}
	for id := range r.Validations {
		if !r.Examples[id] {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var lost []string
	for _, id := range ids {
		status, b := run.do(ctx, adminToken, http.MethodGet, fmt.Sprintf("/api/v1/examples/%d", id), nil)
		if status != http.StatusOK {
			lost = append(lost, fmt.Sprintf("example %d: GET answered %d %.200s", id, status, b))
			continue
		}
		var eb struct {
			Example struct {
				Validations map[string]int `json:"validations"`
			} `json:"example"`
		}
		if err := json.Unmarshal(b, &eb); err != nil {
			lost = append(lost, fmt.Sprintf("example %d: %v", id, err))
			continue
		}
		for label, n := range r.Validations[id] {
			if got := eb.Example.Validations[label]; got < n {
				lost = append(lost, fmt.Sprintf("example %d: %d %q vote(s) stored, %d acknowledged", id, got, label, n))
			}
		}
	}
	return lost
}
