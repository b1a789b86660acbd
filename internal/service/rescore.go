package service

import (
	"context"

	"github.com/dynabench-go/dynabench"
)

// RescoreExample asks the model in the loop again about an example whose model failed, and records
// the answer (and whether it fooled the model) with the counters it moves. The example's creator and
// the task's owners may do this; an example that already has an answer is a conflict.
func (s *Service) RescoreExample(ctx context.Context, actor *dynabench.User, id int64) (*dynabench.Example, error) {
	e, err := s.Example(ctx, actor, id) // creator, owner or admin; others get ENOTFOUND
	if err != nil {
		return nil, err
	}
	if e.ModelError == "" {
		return nil, dynabench.Errorf(dynabench.ECONFLICT, "the model already answered this example")
	}
	if e.Status == dynabench.StatusRetracted {
		return nil, dynabench.Errorf(dynabench.ECONFLICT, "the example was retracted")
	}
	t, err := s.Store.FindTaskByID(ctx, e.TaskID)
	if err != nil {
		return nil, err
	}
	cfg, err := s.Config(t)
	if err != nil {
		return nil, err
	}
	r, err := s.Store.FindRoundByID(ctx, e.RoundID)
	if err != nil {
		return nil, err
	}
	c, err := s.Store.FindContextByID(ctx, e.ContextID)
	if err != nil {
		return nil, err
	}
	// The model is called outside the transaction: it may take seconds.
	fresh := *e
	fresh.ModelID, fresh.ModelName, fresh.ModelOutput, fresh.ModelWrong, fresh.ModelError = nil, "", nil, nil, ""
	s.askModel(ctx, t, cfg, r, c, &fresh)
	var out *dynabench.Example
	err = s.Store.InTx(ctx, func(tx dynabench.Store) error {
		cur, err := tx.LockExample(ctx, id)
		if err != nil {
			return err
		}
		if cur.ModelError == "" || cur.Status == dynabench.StatusRetracted {
			return dynabench.Errorf(dynabench.ECONFLICT, "the example changed meanwhile")
		}
		before := dynabench.Contribution(cur)
		cur.ModelID, cur.ModelName, cur.ModelOutput = fresh.ModelID, fresh.ModelName, fresh.ModelOutput
		cur.ModelWrong, cur.ModelError = fresh.ModelWrong, fresh.ModelError
		if err := tx.UpdateExample(ctx, cur); err != nil {
			return err
		}
		out = cur
		return tx.ApplyStats(ctx, cur, dynabench.Contribution(cur).Sub(before))
	})
	return out, err
}
