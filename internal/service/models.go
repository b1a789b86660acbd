package service

import (
	"context"

	"github.com/dynabench-go/dynabench"
)

// TaskModels lists the task's models the actor may see: published ones, and all of them for owners
// and for the models' own registrants.
func (s *Service) TaskModels(ctx context.Context, actor *dynabench.User, code string) ([]*dynabench.Model, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	all, err := s.Store.FindModels(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	owner, err := s.CanOwn(ctx, actor, t)
	if err != nil {
		return nil, err
	}
	out := make([]*dynabench.Model, 0, len(all))
	for _, m := range all {
		if m.Published || owner || (actor != nil && m.UserID == actor.ID) {
			out = append(out, m)
		}
	}
	return out, nil
}
