package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/service"
)

// ModelRef names a model.
type ModelRef struct {
	ID   string `json:"id" doc:"Empty for an ensemble of the round's models"`
	Name string `json:"name"`
}

// ExampleJSON is an example as its creator and the task's owners see it.
type ExampleJSON struct {
	ID          string                     `json:"id"`
	Task        string                     `json:"task"`
	Round       int                        `json:"round"`
	ContextID   string                     `json:"context_id"`
	Input       map[string]any             `json:"input"`
	Model       *ModelRef                  `json:"model,omitempty"`
	ModelOutput map[string]any             `json:"model_output,omitempty"`
	ModelWrong  *bool                      `json:"model_wrong" doc:"null while an ask_user answer is pending or when the model failed"`
	ModelError  string                     `json:"model_error,omitempty" doc:"Why the model gave no usable answer; the example is kept"`
	Status      string                     `json:"status" enum:"pending_validation,verified,rejected,retracted"`
	Validations dynabench.ValidationCounts `json:"validations"`
	Flagged     bool                       `json:"flagged"`
	FlagReason  string                     `json:"flag_reason,omitempty"`
	Metadata    map[string]any             `json:"metadata"`
	Tag         string                     `json:"tag"`
	CreatedAt   string                     `json:"created_at"`
	Sandbox     bool                       `json:"sandbox,omitempty" doc:"true when nothing was stored"`
}

func exampleJSON(code string, e *dynabench.Example) ExampleJSON {
	ej := ExampleJSON{ID: idString(e.ID), Task: code, Round: e.RoundNumber, ContextID: idString(e.ContextID),
		Input: e.Input, ModelOutput: e.ModelOutput, ModelWrong: e.ModelWrong, ModelError: e.ModelError,
		Status: e.Status, Validations: e.Counts, Flagged: e.Flagged, FlagReason: e.FlagReason,
		Metadata: e.Metadata, Tag: e.Tag, CreatedAt: rfc3339(e.CreatedAt)}
	switch {
	case e.ModelID != nil:
		ej.Model = &ModelRef{ID: idString(*e.ModelID), Name: e.ModelName}
	case e.ModelName != "": // an ensemble of the round's models has a name but no single id
		ej.Model = &ModelRef{Name: e.ModelName}
	}
	if ej.Metadata == nil {
		ej.Metadata = map[string]any{}
	}
	if e.ID == 0 {
		ej.ID, ej.Sandbox = "", true
	}
	return ej
}

// blindJSON is the example as a validator sees it: no model answer, no creator.
func blindJSON(code string, e *dynabench.Example) ExampleJSON {
	ej := exampleJSON(code, e)
	ej.Model, ej.ModelOutput, ej.ModelWrong, ej.ModelError = nil, nil, nil, ""
	ej.Metadata, ej.FlagReason, ej.Flagged = map[string]any{}, "", false
	return ej
}

type createExampleInput struct {
	Code string `path:"code" maxLength:"64"`
	Body struct {
		ContextID string         `json:"context_id" maxLength:"20"`
		Input     map[string]any `json:"input"`
		Metadata  map[string]any `json:"metadata,omitempty"`
		Tag       string         `json:"tag,omitempty" maxLength:"100"`
		Sandbox   bool           `json:"sandbox,omitempty" doc:"Ask the model but store nothing"`
	}
}

type exampleOutput struct {
	Status int
	Body   struct {
		Example ExampleJSON `json:"example"`
	}
}

type patchExampleInput struct {
	ID   string `path:"id"`
	Body struct {
		Metadata   map[string]any `json:"metadata,omitempty" doc:"metadata.create fields (explanations), merged"`
		ModelWrong *bool          `json:"model_wrong,omitempty" doc:"Only for ask_user tasks, while pending"`
	}
}

type flagInput struct {
	ID   string `path:"id"`
	Body *struct {
		Reason string `json:"reason,omitempty" maxLength:"2000"`
	} `required:"false"`
}

func (s *Server) taskCode(ctx context.Context, taskID int64) string {
	t, err := s.svc.Store.FindTaskByID(ctx, taskID)
	if err != nil {
		return ""
	}
	return t.Code
}

func (s *Server) exampleOut(ctx context.Context, status int, e *dynabench.Example) *exampleOutput {
	out := &exampleOutput{Status: status}
	out.Body.Example = exampleJSON(s.taskCode(ctx, e.TaskID), e)
	return out
}

func (s *Server) exampleRoutes() {
	tags := []string{"examples"}
	register(s, op(http.MethodPost, "/api/v1/tasks/{code}/examples", "createExample",
		"Submit an example: the model in the loop answers at once; 201 stored (also when the model failed, with model_error), 200 in sandbox mode", tags, true, 404, 409, 413, 422, 429),
		func(ctx context.Context, in *createExampleInput) (*exampleOutput, error) {
			start := time.Now()
			cid, err := parseID("context_id", in.Body.ContextID)
			if err != nil {
				return nil, err
			}
			e, err := s.svc.CreateExample(ctx, actor(ctx), in.Code, service.NewExample{ContextID: cid, Input: in.Body.Input,
				Metadata: in.Body.Metadata, Tag: in.Body.Tag, Sandbox: in.Body.Sandbox})
			if err != nil {
				return nil, err
			}
			s.metrics.model.WithLabelValues(in.Code).Observe(time.Since(start).Seconds())
			s.metrics.examples.WithLabelValues(in.Code, outcome(e, in.Body.Sandbox)).Inc()
			out := &exampleOutput{Status: http.StatusCreated}
			if in.Body.Sandbox {
				out.Status = http.StatusOK
			}
			out.Body.Example = exampleJSON(in.Code, e)
			return out, nil
		})
	register(s, op(http.MethodGet, "/api/v1/examples/{id}", "getExample", "An example (its creator, the task's owners, admins)", tags, true, 404),
		func(ctx context.Context, in *idPath) (*exampleOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			e, err := s.svc.Example(ctx, actor(ctx), id)
			if err != nil {
				return nil, err
			}
			return s.exampleOut(ctx, http.StatusOK, e), nil
		})
	register(s, op(http.MethodPatch, "/api/v1/examples/{id}", "patchExample", "Add explanations; answer model_wrong for ask_user tasks (creator)", tags, true, 404, 409, 422),
		func(ctx context.Context, in *patchExampleInput) (*exampleOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			e, err := s.svc.UpdateExample(ctx, actor(ctx), id, service.ExamplePatch{Metadata: in.Body.Metadata, ModelWrong: in.Body.ModelWrong})
			if err != nil {
				return nil, err
			}
			return s.exampleOut(ctx, http.StatusOK, e), nil
		})
	register(s, op(http.MethodPost, "/api/v1/examples/{id}/retract", "retractExample", "Withdraw an example; it stops counting (creator)", tags, true, 404, 409),
		func(ctx context.Context, in *idPath) (*exampleOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			e, err := s.svc.RetractExample(ctx, actor(ctx), id)
			if err != nil {
				return nil, err
			}
			return s.exampleOut(ctx, http.StatusOK, e), nil
		})
	register(s, op(http.MethodPost, "/api/v1/examples/{id}/flag", "flagExample", "Flag an example as problematic (creator)", tags, true, 404, 422),
		func(ctx context.Context, in *flagInput) (*exampleOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			reason := ""
			if in.Body != nil {
				reason = in.Body.Reason
			}
			e, err := s.svc.FlagExample(ctx, actor(ctx), id, reason)
			if err != nil {
				return nil, err
			}
			return s.exampleOut(ctx, http.StatusOK, e), nil
		})
	s.validationRoutes()
}

func outcome(e *dynabench.Example, sandbox bool) string {
	switch {
	case sandbox:
		return "sandbox"
	case e.ModelError != "":
		return "model_error"
	case e.ModelWrong == nil:
		return "pending"
	case *e.ModelWrong:
		return "fooled"
	}
	return "not_fooled"
}

type nextValidationInput struct {
	Code  string `path:"code" maxLength:"64"`
	Round int    `query:"round" minimum:"0" doc:"Default: the current round"`
}

type nextValidationOutput struct {
	Status int
	Body   *struct {
		Example ExampleJSON  `json:"example" doc:"Without the model's answer and the creator's identity"`
		Context *ContextJSON `json:"context"`
	}
}

type validateInput struct {
	ID   string `path:"id"`
	Body struct {
		Label    string         `json:"label" enum:"correct,incorrect,flagged"`
		Metadata map[string]any `json:"metadata,omitempty" doc:"metadata.validate fields (corrected label or answer, reasons)"`
		Mode     string         `json:"mode,omitempty" enum:"user,owner" doc:"owner: the task owner's authoritative verdict"`
	}
}

type annotatorsInput struct {
	Code  string `path:"code" maxLength:"64"`
	Round int    `query:"round" minimum:"0" doc:"0 or absent: all rounds"`
	Limit int    `query:"limit" minimum:"1" maximum:"500" default:"50"`
}

// AnnotatorJSON is one row of the annotator leaderboard.
type AnnotatorJSON struct {
	Rank int      `json:"rank"`
	User UserJSON `json:"user"`
	StatsJSON
}

type annotatorsOutput struct {
	Body struct {
		Annotators []AnnotatorJSON `json:"annotators"`
		Round      int             `json:"round" doc:"0: all rounds"`
		NextCursor string          `json:"next_cursor"`
	}
}

func (s *Server) validationRoutes() {
	tags := []string{"validations"}
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/validations/next", "nextValidation",
		"The next example to validate; 204 when none is due", tags, true, 404),
		func(ctx context.Context, in *nextValidationInput) (*nextValidationOutput, error) {
			if _, err := s.visibleTask(ctx, in.Code); err != nil {
				return nil, err
			}
			e, c, err := s.svc.NextToValidate(ctx, actor(ctx), in.Code, in.Round)
			// Nothing due is the store's bare ENOTFOUND; a missing task or round names its field.
			var de *dynabench.Error
			if errors.As(err, &de) && de.Code == dynabench.ENOTFOUND && de.Field == "" && e == nil {
				return &nextValidationOutput{Status: http.StatusNoContent}, nil
			}
			if err != nil {
				return nil, err
			}
			out := &nextValidationOutput{Status: http.StatusOK}
			out.Body = &struct {
				Example ExampleJSON  `json:"example" doc:"Without the model's answer and the creator's identity"`
				Context *ContextJSON `json:"context"`
			}{Example: blindJSON(in.Code, e), Context: &ContextJSON{ID: idString(c.ID), Context: c.Data, Tag: c.Tag, Round: e.RoundNumber}}
			return out, nil
		})
	register(s, op(http.MethodPost, "/api/v1/examples/{id}/validations", "validateExample",
		"Validate an example: correct, incorrect or flagged; 403 own example, 409 already validated", tags, true, 403, 404, 409, 422),
		func(ctx context.Context, in *validateInput) (*exampleOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			e, err := s.svc.Validate(ctx, actor(ctx), id, service.NewValidation{Label: in.Body.Label, Mode: in.Body.Mode, Metadata: in.Body.Metadata})
			if err != nil {
				return nil, err
			}
			out := s.exampleOut(ctx, http.StatusCreated, e)
			return out, nil
		})
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/annotators", "annotators", "The annotator leaderboard of the task or one round", tags, false, 404),
		func(ctx context.Context, in *annotatorsInput) (*annotatorsOutput, error) {
			if _, err := s.visibleTask(ctx, in.Code); err != nil {
				return nil, err
			}
			rows, err := s.svc.Annotators(ctx, in.Code, in.Round, in.Limit)
			if err != nil {
				return nil, err
			}
			out := &annotatorsOutput{}
			out.Body.Round = in.Round
			out.Body.Annotators = make([]AnnotatorJSON, 0, len(rows))
			for i, a := range rows {
				out.Body.Annotators = append(out.Body.Annotators, AnnotatorJSON{Rank: i + 1,
					User: UserJSON{ID: idString(a.UserID), Username: a.Username}, StatsJSON: statsJSON(a)})
			}
			return out, nil
		})
}
