package service

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// NewExample is what an annotator submits.
type NewExample struct {
	ContextID int64
	Input     map[string]any
	Metadata  map[string]any
	Tag       string
	Sandbox   bool // call the model, store nothing
}

func problemsToErr(prefix string, ps []taskconfig.Problem) error {
	if len(ps) == 0 {
		return nil
	}
	fe := make([]dynabench.FieldError, len(ps))
	for i, p := range ps {
		fe[i] = dynabench.FieldError{Field: p.Path, Message: p.Message}
		if prefix != "" && !strings.HasPrefix(p.Path, prefix) {
			fe[i].Field = prefixPath(prefix, p.Path)
		}
	}
	return dynabench.Invalid(fe)
}

// CreateExample checks the input, asks the round's model, decides whether it was fooled, and stores
// the example together with every counter it moves in one transaction. When the model fails the
// example is still stored, with ModelError set, and can be scored again later.
func (s *Service) CreateExample(ctx context.Context, actor *dynabench.User, code string, ne NewExample) (*dynabench.Example, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	t, err := s.VisibleTask(ctx, actor, code)
	if err != nil {
		return nil, err
	}
	cfg, err := s.Config(t)
	if err != nil {
		return nil, err
	}
	round, c, err := s.exampleTarget(ctx, t, ne.ContextID)
	if err != nil {
		return nil, err
	}
	if err := problemsToErr("input", cfg.CheckInput(c.Data, ne.Input, s.Limits)); err != nil {
		return nil, err
	}
	if len(ne.Tag) > 100 {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "tag", "at most 100 bytes")
	}
	e := &dynabench.Example{TaskID: t.ID, RoundID: round.ID, RoundNumber: round.Number, ContextID: c.ID,
		UserID: actor.ID, Input: ne.Input, Metadata: ne.Metadata, Tag: ne.Tag, Status: dynabench.StatusPending}
	if e.Tag == "" {
		e.Tag = c.Tag
	}
	s.askModel(ctx, t, cfg, round, c, e)
	// Explanations are checked once the model has answered: some are asked only when it was fooled.
	if err := problemsToErr("metadata", cfg.CheckCreateMetadata(ne.Metadata, e.ModelWrong, s.Limits)); err != nil {
		return nil, err
	}
	if ne.Sandbox {
		e.CreatedAt = s.Now().UTC()
		return e, nil
	}
	err = s.Store.InTx(ctx, func(tx dynabench.Store) error {
		day := s.Now().UTC().Format(time.DateOnly)
		if err := tx.BumpDailyCount(ctx, actor.ID, t.ID, day, t.Settings.MaxExamplesPerDay); err != nil {
			return err
		}
		if err := tx.CreateExample(ctx, e); err != nil {
			return err
		}
		return tx.ApplyStats(ctx, e, dynabench.Contribution(e))
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// exampleTarget returns the task's open current round and the context, which must belong to it.
func (s *Service) exampleTarget(ctx context.Context, t *dynabench.Task, contextID int64) (*dynabench.Round, *dynabench.Context, error) {
	round, err := s.Round(ctx, t, t.CurrentRound)
	if err != nil {
		return nil, nil, err
	}
	if round.Status != dynabench.RoundOpen {
		return nil, nil, dynabench.Errorf(dynabench.ECONFLICT, "round %d is closed", round.Number)
	}
	if contextID <= 0 {
		return nil, nil, dynabench.FieldErrorf(dynabench.EINVALID, "context_id", "required")
	}
	c, err := s.Store.FindContextByID(ctx, contextID)
	if dynabench.IsCode(err, dynabench.ENOTFOUND) {
		return nil, nil, dynabench.FieldErrorf(dynabench.EINVALID, "context_id", "no context %d", contextID)
	} else if err != nil {
		return nil, nil, err
	}
	if c.TaskID != t.ID {
		return nil, nil, dynabench.FieldErrorf(dynabench.EINVALID, "context_id", "context %d belongs to another task", contextID)
	}
	if c.RoundID != round.ID {
		return nil, nil, dynabench.FieldErrorf(dynabench.EINVALID, "context_id",
			"context %d is not in the current round (%d); fetch a new one", contextID, round.Number)
	}
	return round, c, nil
}

// askModel calls one of the round's models (at random when there are several, as Dynabench does)
// under the task's deadline and records the answer, or the failure, on e.
func (s *Service) askModel(ctx context.Context, t *dynabench.Task, cfg *taskconfig.Config, r *dynabench.Round, c *dynabench.Context, e *dynabench.Example) {
	if len(r.ModelIDs) == 0 {
		e.ModelError = "no model in the loop for this round"
		return
	}
	in := cfg.ModelInput(c.Data, e.Input)
	var out map[string]any
	var err error
	if len(r.ModelIDs) > 1 && (r.LoopMode == dynabench.LoopMean || r.LoopMode == dynabench.LoopVote) {
		out, err = s.askEnsemble(ctx, t, cfg, r, e, in)
	} else {
		out, err = s.askOne(ctx, t, r, e, in)
	}
	if err != nil {
		me := dynabench.AsModelError(err)
		e.ModelError = fmt.Sprintf("%s: %s", me.Kind, truncate(me.Err.Error(), 300))
		s.Log.Warn("model in the loop failed", "task", t.Code, "model", e.ModelName, "kind", me.Kind, "err", me.Err)
		return
	}
	if hasNUL(out) {
		// PostgreSQL cannot store U+0000, and no answer needs it: storing it would lose the example.
		e.ModelError = fmt.Sprintf("%s: the answer contains a NUL character", dynabench.ModelInvalidAnswer)
		return
	}
	clean, problems := cfg.CheckOutput(c.Data, out)
	if len(problems) > 0 {
		e.ModelError = fmt.Sprintf("%s: %s", dynabench.ModelInvalidAnswer, truncate(problems[0].String(), 500))
		e.ModelOutput = boundedOutput(out)
		return
	}
	e.ModelOutput = clean
	e.ModelWrong = cfg.ModelWrong(e.Input, clean)
}

// askOne asks one of the round's models, picked at random when there are several (Dynabench's way).
func (s *Service) askOne(ctx context.Context, t *dynabench.Task, r *dynabench.Round, e *dynabench.Example, in map[string]any) (map[string]any, error) {
	id := r.ModelIDs[0]
	if len(r.ModelIDs) > 1 {
		id = r.ModelIDs[s.intn(len(r.ModelIDs))]
	}
	e.ModelID = &id
	m, err := s.Store.FindModelByID(ctx, id)
	if err != nil {
		e.ModelName = ""
		return nil, &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: errors.New("model in the loop not found")}
	}
	e.ModelName = m.Name
	return s.predict(ctx, t, m, in)
}

func (s *Service) predict(ctx context.Context, t *dynabench.Task, m *dynabench.Model, in map[string]any) (map[string]any, error) {
	if s.Models == nil {
		return nil, &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: errors.New("no model resolver")}
	}
	p, err := s.Models.Predictor(ctx, m)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, modelTimeout(t))
	defer cancel()
	return p.Predict(ctx, in)
}

// modelTimeout is the deadline the task gives its model in the loop.
func modelTimeout(t *dynabench.Task) time.Duration {
	return time.Duration(t.Settings.ModelTimeoutMS) * time.Millisecond
}

// boundedOutput keeps an invalid model answer for diagnosis, but never a huge one.
func boundedOutput(out map[string]any) map[string]any {
	if len(fmt.Sprint(out)) > 4096 {
		return map[string]any{"truncated": true}
	}
	return out
}

// truncate makes text from outside (a model's error) storable: valid UTF-8 without NUL, at most n
// bytes cut on a character boundary.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// hasNUL reports whether any string (or key) of a JSON-shaped value contains U+0000.
func hasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.IndexByte(x, 0) >= 0
	case map[string]any:
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 || hasNUL(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNUL(e) {
				return true
			}
		}
	}
	return false
}

// Example returns an example to its creator, the task's owners and admins.
func (s *Service) Example(ctx context.Context, actor *dynabench.User, id int64) (*dynabench.Example, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	e, err := s.Store.FindExampleByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if e.UserID == actor.ID {
		return e, nil
	}
	t, err := s.Store.FindTaskByID(ctx, e.TaskID)
	if err != nil {
		return nil, err
	}
	if ok, err := s.CanOwn(ctx, actor, t); err != nil {
		return nil, err
	} else if !ok {
		// Not 403: whether someone else's example exists is not the caller's business.
		return nil, dynabench.Errorf(dynabench.ENOTFOUND, "example not found")
	}
	return e, nil
}

// changeOwnExample runs fn on the creator's own example in a transaction and applies the change
// in counters that fn's edit causes.
func (s *Service) changeOwnExample(ctx context.Context, actor *dynabench.User, id int64,
	fn func(t *dynabench.Task, cfg *taskconfig.Config, e *dynabench.Example) error) (*dynabench.Example, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	var out *dynabench.Example
	err := s.Store.InTx(ctx, func(tx dynabench.Store) error {
		e, err := tx.LockExample(ctx, id)
		if err != nil {
			return err
		}
		if e.UserID != actor.ID {
			return dynabench.Errorf(dynabench.ENOTFOUND, "example not found")
		}
		t, err := tx.FindTaskByID(ctx, e.TaskID)
		if err != nil {
			return err
		}
		cfg, err := s.Config(t)
		if err != nil {
			return err
		}
		before := dynabench.Contribution(e)
		if err := fn(t, cfg, e); err != nil {
			return err
		}
		if err := tx.UpdateExample(ctx, e); err != nil {
			return err
		}
		out = e
		return tx.ApplyStats(ctx, e, dynabench.Contribution(e).Sub(before))
	})
	return out, err
}

// ExamplePatch is what a creator may change after the model answered.
type ExamplePatch struct {
	Metadata   map[string]any
	ModelWrong *bool // only for ask_user tasks, and only while the answer is pending
}

// UpdateExample merges explanations into the metadata and, for ask_user tasks, records whether the
// model was wrong — which counts as fooling when true (Dynabench never counts these).
func (s *Service) UpdateExample(ctx context.Context, actor *dynabench.User, id int64, p ExamplePatch) (*dynabench.Example, error) {
	return s.changeOwnExample(ctx, actor, id, func(t *dynabench.Task, cfg *taskconfig.Config, e *dynabench.Example) error {
		if e.Status == dynabench.StatusRetracted {
			return dynabench.Errorf(dynabench.ECONFLICT, "the example was retracted")
		}
		if p.ModelWrong != nil {
			if !cfg.AsksUser() {
				return dynabench.FieldErrorf(dynabench.EINVALID, "model_wrong", "this task decides model_wrong by %s", cfg.ModelWrongMetric.Type)
			}
			if e.ModelWrong != nil {
				return dynabench.FieldErrorf(dynabench.ECONFLICT, "model_wrong", "already answered")
			}
			if e.ModelError != "" {
				return dynabench.FieldErrorf(dynabench.ECONFLICT, "model_wrong", "the model failed on this example; it has no answer to judge")
			}
			e.ModelWrong = p.ModelWrong
		}
		if p.Metadata != nil {
			if err := problemsToErr("metadata", cfg.CheckCreateMetadata(p.Metadata, e.ModelWrong, s.Limits)); err != nil {
				return err
			}
			merged := maps.Clone(e.Metadata)
			if merged == nil {
				merged = map[string]any{}
			}
			maps.Copy(merged, p.Metadata)
			e.Metadata = merged
		}
		return nil
	})
}

// RetractExample withdraws the creator's example: it stops counting everywhere.
func (s *Service) RetractExample(ctx context.Context, actor *dynabench.User, id int64) (*dynabench.Example, error) {
	return s.changeOwnExample(ctx, actor, id, func(_ *dynabench.Task, _ *taskconfig.Config, e *dynabench.Example) error {
		if e.Status == dynabench.StatusRetracted {
			return dynabench.Errorf(dynabench.ECONFLICT, "already retracted")
		}
		e.Status = dynabench.StatusRetracted
		return nil
	})
}

// FlagExample marks the creator's example as problematic, with an optional reason.
func (s *Service) FlagExample(ctx context.Context, actor *dynabench.User, id int64, reason string) (*dynabench.Example, error) {
	if len(reason) > 2000 {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "reason", "at most 2000 bytes")
	}
	return s.changeOwnExample(ctx, actor, id, func(_ *dynabench.Task, _ *taskconfig.Config, e *dynabench.Example) error {
		e.Flagged = true
		if reason != "" {
			e.FlagReason = reason
		}
		return nil
	})
}
