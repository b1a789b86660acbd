package service

import (
	"context"

	"github.com/dynabench-go/dynabench"
)

// NextToValidate returns the next example due for the actor's validation in the task's current
// round (or round n when n > 0); ENOTFOUND when nothing is due.
func (s *Service) NextToValidate(ctx context.Context, actor *dynabench.User, code string, n int) (*dynabench.Example, *dynabench.Context, error) {
	if err := requireUser(actor); err != nil {
		return nil, nil, err
	}
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, nil, err
	}
	if n <= 0 {
		n = t.CurrentRound
	}
	r, err := s.Round(ctx, t, n)
	if err != nil {
		return nil, nil, err
	}
	e, err := s.Store.NextExampleToValidate(ctx, dynabench.ValidationQuery{TaskID: t.ID, RoundID: r.ID, UserID: actor.ID,
		NonFooling: t.Settings.ValidateNonFooling})
	if err != nil {
		return nil, nil, err
	}
	c, err := s.Store.FindContextByID(ctx, e.ContextID)
	return e, c, err
}

// NewValidation is a validator's verdict.
type NewValidation struct {
	Label    string
	Mode     string // user (default) or owner
	Metadata map[string]any
}

// Validate records a verdict and resolves the example: verified at N matching "correct" votes (or an
// owner's "correct"), rejected at N "incorrect" or N "flagged" (or an owner's other verdict). Mixed
// votes stay in the queue until one label reaches N. The example row is locked for the whole
// transaction, so two validators racing for the deciding vote are counted once each, in order.
func (s *Service) Validate(ctx context.Context, actor *dynabench.User, exampleID int64, nv NewValidation) (*dynabench.Example, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	if nv.Mode == "" {
		nv.Mode = dynabench.ModeUser
	}
	switch nv.Label {
	case dynabench.LabelCorrect, dynabench.LabelIncorrect, dynabench.LabelFlagged:
	default:
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "label", "correct, incorrect or flagged")
	}
	if nv.Mode != dynabench.ModeUser && nv.Mode != dynabench.ModeOwner {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "mode", "user or owner")
	}
	var out *dynabench.Example
	err := s.Store.InTx(ctx, func(tx dynabench.Store) error {
		e, err := tx.LockExample(ctx, exampleID)
		if err != nil {
			return err
		}
		t, err := tx.FindTaskByID(ctx, e.TaskID)
		if err != nil {
			return err
		}
		if err := s.checkValidator(ctx, actor, t, e, nv); err != nil {
			return err
		}
		cfg, err := s.Config(t)
		if err != nil {
			return err
		}
		c, err := tx.FindContextByID(ctx, e.ContextID)
		if err != nil {
			return err
		}
		if err := problemsToErr("metadata", cfg.CheckValidateMetadata(c.Data, nv.Label, nv.Metadata, s.Limits)); err != nil {
			return err
		}
		v := &dynabench.Validation{ExampleID: e.ID, UserID: actor.ID, Label: nv.Label, Mode: nv.Mode, Metadata: nv.Metadata}
		if err := tx.CreateValidation(ctx, v); err != nil {
			if dynabench.IsCode(err, dynabench.ECONFLICT) {
				return dynabench.Errorf(dynabench.ECONFLICT, "you already validated this example")
			}
			return err
		}
		before := dynabench.Contribution(e)
		resolve(e, nv, t.Settings.NumMatchingValidations)
		if err := tx.UpdateExample(ctx, e); err != nil {
			return err
		}
		if err := tx.ApplyStats(ctx, e, dynabench.Contribution(e).Sub(before)); err != nil {
			return err
		}
		out = e
		return tx.CountValidation(ctx, e.RoundID, actor.ID)
	})
	return out, err
}

// checkValidator enforces who may vote on e in the given mode.
func (s *Service) checkValidator(ctx context.Context, actor *dynabench.User, t *dynabench.Task, e *dynabench.Example, nv NewValidation) error {
	owner, err := s.CanOwn(ctx, actor, t)
	if err != nil {
		return err
	}
	if t.Settings.Hidden && !owner {
		return dynabench.Errorf(dynabench.ENOTFOUND, "example not found")
	}
	if nv.Mode == dynabench.ModeOwner {
		if !owner {
			return dynabench.FieldErrorf(dynabench.EFORBIDDEN, "mode", "only the task's owners can validate in owner mode")
		}
		if e.Status == dynabench.StatusRetracted {
			return dynabench.Errorf(dynabench.ECONFLICT, "the example was retracted")
		}
		return nil
	}
	if e.UserID == actor.ID {
		return dynabench.Errorf(dynabench.EFORBIDDEN, "you cannot validate your own example")
	}
	switch e.Status {
	case dynabench.StatusRetracted:
		return dynabench.Errorf(dynabench.ECONFLICT, "the example was retracted")
	case dynabench.StatusVerified, dynabench.StatusRejected:
		return dynabench.Errorf(dynabench.ECONFLICT, "the example is already %s", e.Status)
	}
	return nil
}

// resolve counts the vote and settles the example's status.
func resolve(e *dynabench.Example, nv NewValidation, n int) {
	if nv.Mode == dynabench.ModeOwner {
		// The owner's verdict is authoritative and may overturn an earlier resolution.
		if nv.Label == dynabench.LabelCorrect {
			e.Status = dynabench.StatusVerified
		} else {
			e.Status = dynabench.StatusRejected
		}
		return
	}
	switch nv.Label {
	case dynabench.LabelCorrect:
		e.Counts.Correct++
	case dynabench.LabelIncorrect:
		e.Counts.Incorrect++
	case dynabench.LabelFlagged:
		e.Counts.Flagged++
	}
	switch {
	case e.Counts.Correct >= n:
		e.Status = dynabench.StatusVerified
	case e.Counts.Incorrect >= n, e.Counts.Flagged >= n:
		e.Status = dynabench.StatusRejected
	}
}

// Annotators is the task's annotator leaderboard (all rounds when round is 0).
func (s *Service) Annotators(ctx context.Context, code string, round, limit int) ([]dynabench.AnnotatorStats, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	var roundID int64
	if round > 0 {
		r, err := s.Round(ctx, t, round)
		if err != nil {
			return nil, err
		}
		roundID = r.ID
	}
	return s.Store.AnnotatorStats(ctx, t.ID, roundID, limit)
}
