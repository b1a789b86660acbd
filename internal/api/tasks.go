package api

import (
	"bytes"
	"context"
	"net/http"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/service"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// TaskSummary is a task in the list.
type TaskSummary struct {
	Code         string `json:"code"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	CurrentRound int    `json:"current_round"`
}

// TaskJSON is one task in full.
type TaskJSON struct {
	TaskSummary
	Config         map[string]any         `json:"config" doc:"The task config as JSON (unknown keys kept)"`
	ConfigSource   string                 `json:"config_source" doc:"The config exactly as the owner wrote it (YAML or JSON)"`
	GoalMessage    string                 `json:"goal_message,omitempty"`
	ContentWarning string                 `json:"content_warning,omitempty"`
	Settings       dynabench.TaskSettings `json:"settings"`
	Rounds         []RoundJSON            `json:"rounds"`
	Warnings       []dynabench.FieldError `json:"warnings,omitempty" doc:"Config keys we keep but do not interpret"`
}

// RoundJSON is a round with its counters.
type RoundJSON struct {
	Number    int                  `json:"number"`
	Status    string               `json:"status" enum:"open,closed"`
	Models    []string             `json:"models" doc:"Ids of the models in the loop"`
	LoopMode  string               `json:"loop_mode" enum:"random,mean,vote" doc:"How several models in the loop answer"`
	Stats     dynabench.RoundStats `json:"stats"`
	CreatedAt string               `json:"created_at"`
	ClosedAt  *string              `json:"closed_at"`
}

func roundJSON(r *dynabench.Round) RoundJSON {
	rj := RoundJSON{Number: r.Number, Status: r.Status, Models: make([]string, 0, len(r.ModelIDs)), LoopMode: r.LoopMode, Stats: r.Stats,
		CreatedAt: rfc3339(r.CreatedAt)}
	for _, id := range r.ModelIDs {
		rj.Models = append(rj.Models, idString(id))
	}
	if r.ClosedAt != nil {
		c := rfc3339(*r.ClosedAt)
		rj.ClosedAt = &c
	}
	return rj
}

func summary(t *dynabench.Task) TaskSummary {
	return TaskSummary{Code: t.Code, Name: t.Name, Description: t.Description, CurrentRound: t.CurrentRound}
}

func (s *Server) taskJSON(ctx context.Context, t *dynabench.Task, warnings []taskconfig.Problem) (TaskJSON, error) {
	tj := TaskJSON{TaskSummary: summary(t), ConfigSource: t.ConfigSource, Settings: t.Settings, Rounds: []RoundJSON{}}
	cfg, err := s.svc.Config(t)
	if err != nil {
		return tj, err
	}
	tj.Config, tj.GoalMessage, tj.ContentWarning = cfg.Raw, cfg.GoalMessage, cfg.ContentWarning
	rounds, err := s.svc.Store.FindRounds(ctx, t.ID)
	if err != nil {
		return tj, err
	}
	for _, r := range rounds {
		tj.Rounds = append(tj.Rounds, roundJSON(r))
	}
	for _, w := range warnings {
		tj.Warnings = append(tj.Warnings, dynabench.FieldError{Field: "config." + w.Path, Message: w.Message})
	}
	return tj, nil
}

type codePath struct {
	Code string `path:"code" maxLength:"64"`
}

type tasksOutput struct {
	Body struct {
		Tasks      []TaskSummary `json:"tasks"`
		NextCursor string        `json:"next_cursor"`
	}
}

type taskOutput struct {
	Status int
	Body   TaskJSON
}

type createTaskInput struct {
	Body struct {
		Code        string                  `json:"code" maxLength:"64"`
		Name        string                  `json:"name" maxLength:"1000"`
		Description string                  `json:"description,omitempty" maxLength:"20000"`
		Config      any                     `json:"config" doc:"The task config: a YAML (or JSON) string, or a JSON object"`
		Settings    *dynabench.TaskSettings `json:"settings,omitempty"`
	}
}

type configInput struct {
	Code string `path:"code" maxLength:"64"`
	Body struct {
		Config any `json:"config" doc:"The task config: a YAML (or JSON) string, or a JSON object"`
	}
}

type settingsInput struct {
	Code string `path:"code" maxLength:"64"`
	Body dynabench.TaskSettings
}

// configForm splits the two accepted shapes of a config.
func configForm(v any) (string, map[string]any, error) {
	switch c := v.(type) {
	case string:
		return c, nil, nil
	case map[string]any:
		return "", c, nil
	case nil:
		return "", nil, dynabench.FieldErrorf(dynabench.EINVALID, "config", "required")
	}
	return "", nil, dynabench.FieldErrorf(dynabench.EINVALID, "config", "a YAML string or a JSON object")
}

// visibleTask returns the task unless it is hidden from the caller (then: not found).
func (s *Server) visibleTask(ctx context.Context, code string) (*dynabench.Task, error) {
	return s.svc.VisibleTask(ctx, actor(ctx), code)
}

func (s *Server) taskRoutes() {
	tags := []string{"tasks"}
	register(s, op(http.MethodGet, "/api/v1/tasks", "listTasks", "List tasks", tags, false),
		func(ctx context.Context, _ *struct{}) (*tasksOutput, error) {
			ts, err := s.svc.Tasks(ctx, actor(ctx))
			if err != nil {
				return nil, err
			}
			out := &tasksOutput{}
			out.Body.Tasks = make([]TaskSummary, 0, len(ts))
			for _, t := range ts {
				out.Body.Tasks = append(out.Body.Tasks, summary(t))
			}
			return out, nil
		})
	register(s, op(http.MethodPost, "/api/v1/tasks", "createTask", "Create a task with its round 1 (admins)", tags, true, 403, 409, 422),
		func(ctx context.Context, in *createTaskInput) (*taskOutput, error) {
			src, m, err := configForm(in.Body.Config)
			if err != nil {
				return nil, err
			}
			nt := service.NewTask{Code: in.Body.Code, Name: in.Body.Name, Description: in.Body.Description,
				ConfigSource: src, ConfigMap: m}
			if in.Body.Settings != nil {
				nt.Settings = *in.Body.Settings
			}
			t, warnings, err := s.svc.CreateTask(ctx, actor(ctx), nt)
			if err != nil {
				return nil, err
			}
			tj, err := s.taskJSON(ctx, t, warnings)
			return &taskOutput{Status: http.StatusCreated, Body: tj}, err
		})
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}", "getTask", "A task with its config and rounds", tags, false, 404),
		func(ctx context.Context, in *codePath) (*taskOutput, error) {
			t, err := s.visibleTask(ctx, in.Code)
			if err != nil {
				return nil, err
			}
			tj, err := s.taskJSON(ctx, t, nil)
			return &taskOutput{Status: http.StatusOK, Body: tj}, err
		})
	register(s, op(http.MethodPut, "/api/v1/tasks/{code}/config", "putTaskConfig", "Replace the task config (owners); 422 lists every problem", tags, true, 403, 404, 422),
		func(ctx context.Context, in *configInput) (*taskOutput, error) {
			src, m, err := configForm(in.Body.Config)
			if err != nil {
				return nil, err
			}
			t, warnings, err := s.svc.UpdateConfig(ctx, actor(ctx), in.Code, src, m)
			if err != nil {
				return nil, err
			}
			tj, err := s.taskJSON(ctx, t, warnings)
			return &taskOutput{Status: http.StatusOK, Body: tj}, err
		})
	register(s, op(http.MethodPut, "/api/v1/tasks/{code}/settings", "putTaskSettings", "Replace the task settings (owners)", tags, true, 403, 404, 422),
		func(ctx context.Context, in *settingsInput) (*taskOutput, error) {
			t, err := s.svc.UpdateSettings(ctx, actor(ctx), in.Code, in.Body)
			if err != nil {
				return nil, err
			}
			tj, err := s.taskJSON(ctx, t, nil)
			return &taskOutput{Status: http.StatusOK, Body: tj}, err
		})
	s.roundRoutes()
}

type roundsOutput struct {
	Body struct {
		Rounds []RoundJSON `json:"rounds"`
	}
}

type roundPath struct {
	Code   string `path:"code" maxLength:"64"`
	Number int    `path:"n" minimum:"1"`
}

type roundOutput struct {
	Status int
	Body   RoundJSON
}

type modelsBody struct {
	Models []string `json:"models" maxItems:"50" doc:"Ids of the task's models to put in the loop"`
	Mode   string   `json:"mode,omitempty" enum:"random,mean,vote" doc:"With several models: one at random per example (default), or all as an ensemble (mean probability, majority vote)"`
}

type nextRoundInput struct {
	Code string `path:"code" maxLength:"64"`
	Body modelsBody
}

type roundModelsInput struct {
	Code   string `path:"code" maxLength:"64"`
	Number int    `path:"n" minimum:"1"`
	Body   modelsBody
}

type contextsInput struct {
	Code    string `path:"code" maxLength:"64"`
	Number  int    `path:"n" minimum:"1"`
	RawBody []byte `contentType:"application/x-ndjson"`
}

type createdOutput struct {
	Status int
	Body   struct {
		Created int `json:"created"`
	}
}

type pickInput struct {
	Code     string `path:"code" maxLength:"64"`
	Strategy string `query:"strategy" enum:"least_used,uniform,least_fooled,validation_failed," doc:"Default: the task's strategy (least_used)"`
	Tag      string `query:"tag" maxLength:"100"`
}

// ContextJSON is a context handed to an annotator.
type ContextJSON struct {
	ID       string         `json:"id"`
	Context  map[string]any `json:"context"`
	Tag      string         `json:"tag"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Round    int            `json:"round"`
}

type contextOutput struct{ Body ContextJSON }

func (s *Server) roundRoutes() {
	tags := []string{"rounds"}
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/rounds", "listRounds", "The task's rounds with their stats", tags, false, 404),
		func(ctx context.Context, in *codePath) (*roundsOutput, error) {
			t, err := s.visibleTask(ctx, in.Code)
			if err != nil {
				return nil, err
			}
			rounds, err := s.svc.Store.FindRounds(ctx, t.ID)
			if err != nil {
				return nil, err
			}
			out := &roundsOutput{}
			out.Body.Rounds = make([]RoundJSON, 0, len(rounds))
			for _, r := range rounds {
				out.Body.Rounds = append(out.Body.Rounds, roundJSON(r))
			}
			return out, nil
		})
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/rounds/{n}", "getRound", "One round with its stats", tags, false, 404),
		func(ctx context.Context, in *roundPath) (*roundOutput, error) {
			t, err := s.visibleTask(ctx, in.Code)
			if err != nil {
				return nil, err
			}
			r, err := s.svc.Round(ctx, t, in.Number)
			if err != nil {
				return nil, err
			}
			return &roundOutput{Status: http.StatusOK, Body: roundJSON(r)}, nil
		})
	register(s, op(http.MethodPost, "/api/v1/tasks/{code}/rounds", "nextRound", "Close the current round and open the next (owners)", tags, true, 403, 404, 409, 422),
		func(ctx context.Context, in *nextRoundInput) (*roundOutput, error) {
			ids, err := parseIDs("models", in.Body.Models)
			if err != nil {
				return nil, err
			}
			r, err := s.svc.NextRound(ctx, actor(ctx), in.Code, ids, in.Body.Mode)
			if err != nil {
				return nil, err
			}
			return &roundOutput{Status: http.StatusCreated, Body: roundJSON(r)}, nil
		})
	register(s, op(http.MethodPut, "/api/v1/tasks/{code}/rounds/{n}/models", "setRoundModels", "Set the models in the loop (owners)", tags, true, 403, 404, 422),
		func(ctx context.Context, in *roundModelsInput) (*roundOutput, error) {
			ids, err := parseIDs("models", in.Body.Models)
			if err != nil {
				return nil, err
			}
			r, err := s.svc.SetRoundModels(ctx, actor(ctx), in.Code, in.Number, ids, in.Body.Mode)
			if err != nil {
				return nil, err
			}
			return &roundOutput{Status: http.StatusOK, Body: roundJSON(r)}, nil
		})
	co := op(http.MethodPost, "/api/v1/tasks/{code}/rounds/{n}/contexts", "uploadContexts",
		"Upload contexts as JSON Lines (owners); 422 names the first bad line, and nothing is stored then", tags, true, 403, 404, 413, 422)
	co.MaxBodyBytes = 64 << 20
	register(s, co, func(ctx context.Context, in *contextsInput) (*createdOutput, error) {
		n, err := s.svc.UploadContexts(ctx, actor(ctx), in.Code, in.Number, bytes.NewReader(in.RawBody))
		if err != nil {
			return nil, err
		}
		out := &createdOutput{Status: http.StatusCreated}
		out.Body.Created = n
		return out, nil
	})
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/context", "getContext", "A context of the current round to write an example on", tags, true, 404),
		func(ctx context.Context, in *pickInput) (*contextOutput, error) {
			if _, err := s.visibleTask(ctx, in.Code); err != nil {
				return nil, err
			}
			c, err := s.svc.PickContext(ctx, actor(ctx), in.Code, in.Strategy, in.Tag)
			if err != nil {
				return nil, err
			}
			r, err := s.svc.Store.FindRoundByID(ctx, c.RoundID)
			if err != nil {
				return nil, err
			}
			return &contextOutput{Body: ContextJSON{ID: idString(c.ID), Context: c.Data, Tag: c.Tag, Metadata: c.Metadata, Round: r.Number}}, nil
		})
}
