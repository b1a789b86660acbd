package service

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

var taskCodeRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,31}$`)

// NewTask is what an admin sends to create a task.
type NewTask struct {
	Code, Name, Description string
	ConfigSource            string         // YAML or JSON text, or
	ConfigMap               map[string]any // a decoded JSON object
	Settings                dynabench.TaskSettings
}

// parseConfig parses either form and turns every problem into one EINVALID error listing them all.
func parseConfig(source string, m map[string]any) (*taskconfig.Config, []taskconfig.Problem, error) {
	var cfg *taskconfig.Config
	var rep *taskconfig.Report
	switch {
	case m != nil:
		cfg, rep = taskconfig.ParseMap(m)
	case strings.TrimSpace(source) != "":
		cfg, rep = taskconfig.Parse([]byte(source))
	default:
		return nil, nil, dynabench.FieldErrorf(dynabench.EINVALID, "config", "a task config is required")
	}
	if cfg == nil || !rep.OK() {
		var fe []dynabench.FieldError
		for _, p := range rep.Problems {
			fe = append(fe, dynabench.FieldError{Field: prefixPath("config", p.Path), Message: p.Message})
		}
		if len(fe) == 0 {
			fe = append(fe, dynabench.FieldError{Field: "config", Message: "not a usable task config"})
		}
		return nil, nil, dynabench.Invalid(fe)
	}
	return cfg, rep.Warnings, nil
}

func prefixPath(prefix, path string) string {
	if path == "" {
		return prefix
	}
	return prefix + "." + path
}

// CreateTask creates a task with its round 1 (admins only); the creator becomes an owner.
// Warnings list unknown config keys, which are kept.
func (s *Service) CreateTask(ctx context.Context, actor *dynabench.User, nt NewTask) (*dynabench.Task, []taskconfig.Problem, error) {
	if err := requireUser(actor); err != nil {
		return nil, nil, err
	}
	if !actor.Admin {
		return nil, nil, dynabench.Errorf(dynabench.EFORBIDDEN, "only admins can create tasks")
	}
	var problems []dynabench.FieldError
	if !taskCodeRE.MatchString(nt.Code) {
		problems = append(problems, dynabench.FieldError{Field: "code", Message: "2 to 32 lower-case letters, digits or '-'"})
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(nt.Name)); n == 0 || n > 200 {
		problems = append(problems, dynabench.FieldError{Field: "name", Message: "1 to 200 characters"})
	}
	if len(nt.Description) > 20000 {
		problems = append(problems, dynabench.FieldError{Field: "description", Message: "at most 20000 bytes"})
	}
	problems = append(problems, checkSettings(nt.Settings)...)
	cfg, warnings, err := parseConfig(nt.ConfigSource, nt.ConfigMap)
	if err != nil {
		var de *dynabench.Error
		if errors.As(err, &de) {
			problems = append(problems, de.Details...)
		}
	}
	if len(problems) > 0 {
		return nil, nil, dynabench.Invalid(problems)
	}
	t := &dynabench.Task{Code: nt.Code, Name: strings.TrimSpace(nt.Name), Description: nt.Description,
		ConfigSource: cfg.Source, Settings: nt.Settings}
	err = s.Store.InTx(ctx, func(tx dynabench.Store) error {
		if err := tx.CreateTask(ctx, t); err != nil {
			if dynabench.IsCode(err, dynabench.ECONFLICT) {
				return dynabench.FieldErrorf(dynabench.ECONFLICT, "code", "a task with code %q exists", nt.Code)
			}
			return err
		}
		if err := tx.AddTaskOwner(ctx, t.ID, actor.ID); err != nil {
			return err
		}
		r := &dynabench.Round{TaskID: t.ID, Number: 1, Secret: newSecret()}
		if err := tx.CreateRound(ctx, r); err != nil {
			return err
		}
		t.CurrentRound = 1
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return t, warnings, nil
}

func checkSettings(st dynabench.TaskSettings) []dynabench.FieldError {
	var p []dynabench.FieldError
	if st.NumMatchingValidations < 0 || st.NumMatchingValidations > 100 {
		p = append(p, dynabench.FieldError{Field: "settings.num_matching_validations", Message: "between 1 and 100"})
	}
	switch st.ContextStrategy {
	case "", dynabench.StrategyLeastUsed, dynabench.StrategyUniform, dynabench.StrategyLeastFooled, dynabench.StrategyValidationFailed:
	default:
		p = append(p, dynabench.FieldError{Field: "settings.context_strategy", Message: "least_used, uniform, least_fooled or validation_failed"})
	}
	if st.MaxExamplesPerDay < 0 {
		p = append(p, dynabench.FieldError{Field: "settings.max_examples_per_day", Message: "0 (no cap) or more"})
	}
	if st.ModelTimeoutMS < 0 || st.ModelTimeoutMS > 120000 {
		p = append(p, dynabench.FieldError{Field: "settings.model_timeout_ms", Message: "between 1 and 120000"})
	}
	return p
}

func newSecret() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Task returns the task by code.
func (s *Service) Task(ctx context.Context, code string) (*dynabench.Task, error) {
	t, err := s.Store.FindTaskByCode(ctx, code)
	if dynabench.IsCode(err, dynabench.ENOTFOUND) {
		return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "code", "no task %q", code)
	}
	return t, err
}

// VisibleTask returns the task unless it is hidden from the actor (then ENOTFOUND, as for a task
// that does not exist): hidden tasks are for their owners and admins.
func (s *Service) VisibleTask(ctx context.Context, actor *dynabench.User, code string) (*dynabench.Task, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if t.Settings.Hidden {
		if ok, err := s.CanOwn(ctx, actor, t); err != nil {
			return nil, err
		} else if !ok {
			return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "code", "no task %q", code)
		}
	}
	return t, nil
}

// Tasks lists the tasks the actor can see (hidden tasks only for admins and their owners).
func (s *Service) Tasks(ctx context.Context, actor *dynabench.User) ([]*dynabench.Task, error) {
	all, err := s.Store.FindTasks(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*dynabench.Task, 0, len(all))
	for _, t := range all {
		if t.Settings.Hidden {
			if ok, err := s.CanOwn(ctx, actor, t); err != nil || !ok {
				continue
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// UpdateConfig replaces a task's config (owners only); 422 lists every problem.
func (s *Service) UpdateConfig(ctx context.Context, actor *dynabench.User, code, source string, m map[string]any) (*dynabench.Task, []taskconfig.Problem, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, nil, err
	}
	cfg, warnings, err := parseConfig(source, m)
	if err != nil {
		return nil, nil, err
	}
	if err := s.Store.UpdateTaskConfig(ctx, t.ID, cfg.Source); err != nil {
		return nil, nil, err
	}
	t, err = s.Store.FindTaskByID(ctx, t.ID)
	return t, warnings, err
}

// UpdateSettings replaces a task's settings (owners only).
func (s *Service) UpdateSettings(ctx context.Context, actor *dynabench.User, code string, st dynabench.TaskSettings) (*dynabench.Task, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, err
	}
	if p := checkSettings(st); len(p) > 0 {
		return nil, dynabench.Invalid(p)
	}
	if err := s.Store.UpdateTaskSettings(ctx, t.ID, st); err != nil {
		return nil, err
	}
	return s.Store.FindTaskByID(ctx, t.ID)
}

// Round returns round n of the task.
func (s *Service) Round(ctx context.Context, t *dynabench.Task, n int) (*dynabench.Round, error) {
	r, err := s.Store.FindRound(ctx, t.ID, n)
	if dynabench.IsCode(err, dynabench.ENOTFOUND) {
		return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "round", "task %s has no round %d", t.Code, n)
	}
	return r, err
}

// checkModels makes sure every id names a model of the task.
func (s *Service) checkModels(ctx context.Context, t *dynabench.Task, ids []int64) error {
	seen := map[int64]bool{}
	for i, id := range ids {
		m, err := s.Store.FindModelByID(ctx, id)
		if dynabench.IsCode(err, dynabench.ENOTFOUND) || (err == nil && m.TaskID != t.ID) {
			return dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("models[%d]", i), "no model %d in task %s", id, t.Code)
		} else if err != nil {
			return err
		}
		if seen[id] {
			return dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("models[%d]", i), "model %d listed twice", id)
		}
		seen[id] = true
	}
	return nil
}

// NextRound closes the current round and opens the next with the given models in the loop and loop
// mode ("" for random) (owners).
func (s *Service) NextRound(ctx context.Context, actor *dynabench.User, code string, models []int64, mode string) (*dynabench.Round, error) {
	if err := checkLoopMode(mode); err != nil {
		return nil, err
	}
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, err
	}
	if err := s.checkModels(ctx, t, models); err != nil {
		return nil, err
	}
	r := &dynabench.Round{TaskID: t.ID, Number: t.CurrentRound + 1, Secret: newSecret(), ModelIDs: models, LoopMode: mode}
	err = s.Store.InTx(ctx, func(tx dynabench.Store) error {
		cur, err := tx.FindTaskByID(ctx, t.ID) // re-read inside the transaction: two owners may race
		if err != nil {
			return err
		}
		if cur.CurrentRound != t.CurrentRound {
			return dynabench.Errorf(dynabench.ECONFLICT, "the round changed meanwhile; reload and try again")
		}
		if old, err := tx.FindRound(ctx, t.ID, t.CurrentRound); err == nil {
			if err := tx.CloseRound(ctx, old.ID, s.Now()); err != nil {
				return err
			}
		} else if !dynabench.IsCode(err, dynabench.ENOTFOUND) {
			return err
		}
		return tx.CreateRound(ctx, r)
	})
	if err != nil {
		if dynabench.IsCode(err, dynabench.ECONFLICT) {
			return nil, dynabench.Errorf(dynabench.ECONFLICT, "the round changed meanwhile; reload and try again")
		}
		return nil, err
	}
	return s.Store.FindRoundByID(ctx, r.ID)
}

// SetRoundModels sets the models in the loop of round n and, unless mode is empty, how several of
// them answer: LoopRandom, LoopMean or LoopVote (owners). Both change in one transaction.
func (s *Service) SetRoundModels(ctx context.Context, actor *dynabench.User, code string, n int, models []int64, mode string) (*dynabench.Round, error) {
	if err := checkLoopMode(mode); err != nil {
		return nil, err
	}
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, err
	}
	r, err := s.Round(ctx, t, n)
	if err != nil {
		return nil, err
	}
	if err := s.checkModels(ctx, t, models); err != nil {
		return nil, err
	}
	err = s.Store.InTx(ctx, func(tx dynabench.Store) error {
		if err := tx.SetRoundModels(ctx, r.ID, models); err != nil {
			return err
		}
		if mode == "" {
			return nil
		}
		return tx.SetRoundLoopMode(ctx, r.ID, mode)
	})
	if err != nil {
		return nil, err
	}
	return s.Store.FindRoundByID(ctx, r.ID)
}

func checkLoopMode(mode string) error {
	switch mode {
	case "", dynabench.LoopRandom, dynabench.LoopMean, dynabench.LoopVote:
		return nil
	}
	return dynabench.FieldErrorf(dynabench.EINVALID, "mode", "random, mean or vote")
}

// Upload limits.
const (
	MaxJSONLLine  = 1 << 20 // bytes per line
	MaxJSONLLines = 100000
)

type contextLine struct {
	Context  map[string]any `json:"context"`
	Tag      *string        `json:"tag"`
	Metadata map[string]any `json:"metadata"`
}

// UploadContexts adds contexts to round n from JSON Lines (owners). Every line is checked against the
// config first; the first bad line is named and nothing is stored unless every line is good.
func (s *Service) UploadContexts(ctx context.Context, actor *dynabench.User, code string, n int, body io.Reader) (int, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return 0, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return 0, err
	}
	r, err := s.Round(ctx, t, n)
	if err != nil {
		return 0, err
	}
	cfg, err := s.Config(t)
	if err != nil {
		return 0, err
	}
	var cs []*dynabench.Context
	err = ReadJSONL(body, func(line int, raw []byte) error {
		c, err := s.parseContextLine(cfg, raw)
		if err != nil {
			return err
		}
		c.TaskID, c.RoundID = t.ID, r.ID
		cs = append(cs, c)
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(cs) == 0 {
		return 0, dynabench.FieldErrorf(dynabench.EINVALID, "body", "no contexts: send one JSON object per line")
	}
	return len(cs), s.Store.CreateContexts(ctx, cs)
}

func (s *Service) parseContextLine(cfg *taskconfig.Config, raw []byte) (*dynabench.Context, error) {
	var cl contextLine
	if err := decodeStrict(raw, &cl); err != nil {
		return nil, err
	}
	if cl.Context == nil {
		return nil, fmt.Errorf(`"context": required, an object with the task's context fields`)
	}
	if hasNUL(cl.Context) || hasNUL(cl.Metadata) || (cl.Tag != nil && hasNUL(*cl.Tag)) {
		return nil, errors.New("text may not contain NUL (U+0000) characters")
	}
	if p := cfg.CheckContext(cl.Context, s.Limits); len(p) > 0 {
		return nil, fmt.Errorf("%s", p[0].String())
	}
	c := &dynabench.Context{Data: cl.Context, Metadata: cl.Metadata}
	if cl.Tag != nil {
		c.Tag = strings.TrimSpace(*cl.Tag)
		if len(c.Tag) > 100 || !utf8.ValidString(c.Tag) {
			return nil, fmt.Errorf(`"tag": at most 100 bytes of UTF-8`)
		}
	}
	return c, nil
}

// decodeStrict decodes one JSON object, refusing unknown keys and trailing data.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not a valid object: %s", jsonErrorText(err))
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

func jsonErrorText(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("%q should be %s, not %s", te.Field, te.Type, te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// ReadJSONL calls fn for every non-blank line; an error from fn or a malformed line stops the read
// with an EINVALID naming the line (or ETOOLARGE for an oversized line or file).
func ReadJSONL(body io.Reader, fn func(line int, raw []byte) error) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64*1024), MaxJSONLLine)
	line, count := 0, 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if count++; count > MaxJSONLLines {
			return dynabench.FieldErrorf(dynabench.ETOOLARGE, "body", "more than %d lines", MaxJSONLLines)
		}
		if !utf8.Valid(raw) {
			return dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("line %d", line), "not valid UTF-8")
		}
		if err := fn(line, raw); err != nil {
			if de := (*dynabench.Error)(nil); errors.As(err, &de) {
				return err
			}
			return dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("line %d", line), "%s", err.Error())
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return dynabench.FieldErrorf(dynabench.ETOOLARGE, fmt.Sprintf("line %d", line+1), "line longer than %d bytes", MaxJSONLLine)
		}
		return dynabench.FieldErrorf(dynabench.EINVALID, "body", "could not read the upload: %v", err)
	}
	return nil
}

// PickContext hands the actor a context of the task's current round.
func (s *Service) PickContext(ctx context.Context, actor *dynabench.User, code, strategy, tag string) (*dynabench.Context, error) {
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
	if strategy == "" {
		strategy = t.Settings.ContextStrategy
	}
	c, err := s.Store.PickContext(ctx, dynabench.ContextQuery{TaskID: t.ID, RoundID: r.ID, Strategy: strategy, Tag: tag})
	if dynabench.IsCode(err, dynabench.ENOTFOUND) {
		if tag != "" {
			return nil, dynabench.FieldErrorf(dynabench.ENOTFOUND, "tag", "no context with tag %q in round %d", tag, r.Number)
		}
		return nil, dynabench.Errorf(dynabench.ENOTFOUND, "no context available in round %d (strategy %s)", r.Number, strategy)
	}
	return c, err
}
