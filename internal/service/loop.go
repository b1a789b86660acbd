package service

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters"
	"github.com/dynabench-go/dynabench/internal/adapters/ensemble"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// askEnsemble asks every model of the round and combines their answers (mean probability or
// majority vote). Members that fail are skipped while at least one answers. The example records the
// ensemble by name; it has no single model id.
func (s *Service) askEnsemble(ctx context.Context, t *dynabench.Task, cfg *taskconfig.Config, r *dynabench.Round,
	e *dynabench.Example, in map[string]any) (map[string]any, error) {
	if s.Models == nil {
		return nil, &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: fmt.Errorf("no model resolver")}
	}
	members := make([]ensemble.Member, 0, len(r.ModelIDs))
	names := make([]string, 0, len(r.ModelIDs))
	for _, id := range r.ModelIDs {
		m, err := s.Store.FindModelByID(ctx, id)
		if err != nil {
			continue
		}
		p, err := s.Models.Predictor(ctx, m)
		if err != nil {
			s.Log.Warn("ensemble member unavailable", "task", t.Code, "model", m.Name, "err", err)
			continue
		}
		members = append(members, ensemble.Member{Name: m.Name, Predictor: p})
		names = append(names, m.Name)
	}
	e.ModelName = fmt.Sprintf("ensemble(%s): %s", r.LoopMode, strings.Join(names, ", "))
	if len(members) == 0 {
		return nil, &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: fmt.Errorf("no model of the ensemble is available")}
	}
	ens, err := ensemble.New(adapters.SpecFor(cfg), ensemble.Mode(r.LoopMode), members, rand.NewPCG(uint64(s.intn(1<<30)), 1))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, modelTimeout(t))
	defer cancel()
	return ens.Predict(ctx, in)
}
