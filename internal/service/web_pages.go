package service

import (
	"context"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/secret"
)

// The rules in this file serve the web pages (internal/web): data the JSON API does not need in
// this shape, with the same visibility and ownership checks as every other rule.

// Logout revokes the session token the browser holds. An unknown or expired token is not an
// error: the caller is logged out either way.
func (s *Service) Logout(ctx context.Context, token string) error {
	if !strings.HasPrefix(token, secret.TokenPrefix) || len(token) > 200 {
		return nil
	}
	t, _, err := s.Store.FindTokenUser(ctx, secret.HashToken(token))
	if dynabench.IsCode(err, dynabench.ENOTFOUND) {
		return nil
	} else if err != nil {
		return err
	}
	if err := s.Store.DeleteToken(ctx, t.UserID, t.ID); err != nil && !dynabench.IsCode(err, dynabench.ENOTFOUND) {
		return err
	}
	return nil
}

// TaskRounds returns the task (unless hidden from the actor) and its rounds, oldest first.
func (s *Service) TaskRounds(ctx context.Context, actor *dynabench.User, code string) (*dynabench.Task, []*dynabench.Round, error) {
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, nil, err
	}
	rounds, err := s.Store.FindRounds(ctx, t.ID)
	return t, rounds, err
}

// CreateContext returns context id of the task's current round for the actor to write on (the
// create page reloads the same context); ENOTFOUND when it is not a context of that round.
func (s *Service) CreateContext(ctx context.Context, actor *dynabench.User, code string, id int64) (*dynabench.Context, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	r, err := s.Round(ctx, t, t.CurrentRound)
	if err != nil {
		return nil, err
	}
	c, err := s.Store.FindContextByID(ctx, id)
	if err != nil || c.TaskID != t.ID || c.RoundID != r.ID {
		if err == nil || dynabench.IsCode(err, dynabench.ENOTFOUND) {
			return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "context", "no context %d in the current round", id)
		}
		return nil, err
	}
	return c, nil
}

// MyRoundStats returns the actor's counters in round n of the task (zero when they wrote nothing).
func (s *Service) MyRoundStats(ctx context.Context, actor *dynabench.User, code string, n int) (dynabench.AnnotatorStats, error) {
	out := dynabench.AnnotatorStats{}
	if err := requireUser(actor); err != nil {
		return out, err
	}
	out.UserID, out.Username = actor.ID, actor.Username
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return out, err
	}
	r, err := s.Round(ctx, t, n)
	if err != nil {
		return out, err
	}
	// The leaderboard query is the only per-round read the store offers; a round has at most a
	// few thousand annotators, so reading it whole is cheap next to a page render.
	all, err := s.Store.AnnotatorStats(ctx, t.ID, r.ID, 100000)
	if err != nil {
		return out, err
	}
	for _, a := range all {
		if a.UserID == actor.ID {
			return a, nil
		}
	}
	return out, nil
}

// FlaggedExamples lists the task's examples that their writer or a validator flagged, newest
// first, at most limit (owners). Retracted examples are left out: they no longer count.
func (s *Service) FlaggedExamples(ctx context.Context, actor *dynabench.User, code string, limit int) ([]*dynabench.Example, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, err
	}
	var out []*dynabench.Example
	var after int64
	for {
		page, err := s.Store.FindExamples(ctx, dynabench.ExampleFilter{TaskID: t.ID, AfterID: after})
		if err != nil {
			return nil, err
		}
		for _, e := range page {
			if e.Status != dynabench.StatusRetracted && (e.Flagged || e.Counts.Flagged > 0) {
				out = append(out, e)
			}
		}
		if len(page) < dynabench.MaxExamplesPage {
			break
		}
		after = page[len(page)-1].ID
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ExampleContext returns the context an example was written on, for a page that shows the example
// to its owners (the caller has already read the example through Example).
func (s *Service) ExampleContext(ctx context.Context, actor *dynabench.User, e *dynabench.Example) (*dynabench.Context, error) {
	if _, err := s.Example(ctx, actor, e.ID); err != nil {
		return nil, err
	}
	return s.Store.FindContextByID(ctx, e.ContextID)
}

// OwnedTask returns the task when the actor may act as its owner: EUNAUTHORIZED for anonymous
// callers, ENOTFOUND for non-owners of a hidden task, EFORBIDDEN for other non-owners (the owner
// pages check this before showing a form whose submission the rules would refuse anyway).
func (s *Service) OwnedTask(ctx context.Context, actor *dynabench.User, code string) (*dynabench.Task, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, err
	}
	return t, nil
}
