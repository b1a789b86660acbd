package api

import (
	"context"
	"net/http"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/service"
)

// ModelJSON is a registered model as listed for its task.
type ModelJSON struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Kind      string `json:"kind" enum:"builtin,dynalab,openai,hf,kserve"`
	Published bool   `json:"published"`
	Card      string `json:"card,omitempty"`
	CreatedAt string `json:"created_at"`
}

type modelsOutput struct {
	Body struct {
		Models     []ModelJSON `json:"models"`
		NextCursor string      `json:"next_cursor"`
	}
}

func (s *Server) modelRoutes() {
	register(s, op(http.MethodGet, "/api/v1/tasks/{code}/models", "listModels",
		"The task's models: published ones, and all for owners", []string{"models"}, false, 404),
		func(ctx context.Context, in *codePath) (*modelsOutput, error) {
			if _, err := s.visibleTask(ctx, in.Code); err != nil {
				return nil, err
			}
			ms, err := s.svc.TaskModels(ctx, actor(ctx), in.Code)
			if err != nil {
				return nil, err
			}
			out := &modelsOutput{}
			out.Body.Models = make([]ModelJSON, 0, len(ms))
			for _, m := range ms {
				out.Body.Models = append(out.Body.Models, ModelJSON{ID: idString(m.ID), Name: m.Name, Kind: m.Kind,
					Published: m.Published, Card: m.Card, CreatedAt: rfc3339(m.CreatedAt)})
			}
			return out, nil
		})
}

type registerModelInput struct {
	Code string `path:"code" maxLength:"64"`
	Body struct {
		Name    string         `json:"name" maxLength:"100"`
		Kind    string         `json:"kind" enum:"builtin,dynalab,openai,hf,kserve"`
		URL     string         `json:"url,omitempty" maxLength:"2000"`
		Options map[string]any `json:"options,omitempty" doc:"Adapter options; secrets only by reference (api_key_env, owners only)"`
		Card    string         `json:"card,omitempty" maxLength:"100000" doc:"Model card, Markdown"`
	}
}

// ModelDetailJSON is one model in full.
type ModelDetailJSON struct {
	ModelJSON
	Task    string         `json:"task"`
	URL     string         `json:"url,omitempty"`
	Options map[string]any `json:"options,omitempty"`
	Owner   UserJSON       `json:"owner"`
	Health  *HealthJSON    `json:"health,omitempty" doc:"Calls to the model from this server since it started"`
	// Evaluations are per dataset the caller may see, with status, scores and (for the model's and
	// the task's owners) the log.
	Evaluations []EvaluationJSON `json:"evaluations"`
}

// HealthJSON is what the server has seen of a model: calls, failures, the last error and latency.
type HealthJSON struct {
	Calls         int64   `json:"calls"`
	Failures      int64   `json:"failures"`
	LastError     string  `json:"last_error,omitempty"`
	LastErrorAt   *string `json:"last_error_at,omitempty"`
	LastLatencyMS float64 `json:"last_latency_ms"`
	Breaker       string  `json:"breaker,omitempty" enum:"closed,open,half-open,"`
}

type modelOutput struct {
	Status int
	Body   ModelDetailJSON
}

func (s *Server) modelDetail(ctx context.Context, id int64, code string) (ModelDetailJSON, error) {
	m, t, err := s.svc.Model(ctx, actor(ctx), id)
	if err != nil {
		return ModelDetailJSON{}, err
	}
	d := ModelDetailJSON{ModelJSON: ModelJSON{ID: idString(m.ID), Name: m.Name, Kind: m.Kind, Published: m.Published,
		Card: m.Card, CreatedAt: rfc3339(m.CreatedAt)}, Task: t.Code, URL: m.URL}
	if code != "" && code != t.Code {
		return ModelDetailJSON{}, dynabench.Errorf(dynabench.ENOTFOUND, "model not found")
	}
	if u, err := s.svc.Store.FindUserByID(ctx, m.UserID); err == nil {
		d.Owner = UserJSON{ID: idString(u.ID), Username: u.Username}
	}
	sts, err := s.svc.ModelEvaluations(ctx, actor(ctx), m, t)
	if err != nil {
		return ModelDetailJSON{}, err
	}
	mine := false
	if a := actor(ctx); a != nil {
		ok, _ := s.svc.CanOwn(ctx, a, t)
		mine = ok || a.ID == m.UserID
	}
	d.Evaluations = make([]EvaluationJSON, 0, len(sts))
	for _, st := range sts {
		d.Evaluations = append(d.Evaluations, evaluationJSON(st, mine))
	}
	if a := actor(ctx); a != nil {
		if ok, _ := s.svc.CanOwn(ctx, a, t); ok || a.ID == m.UserID {
			d.Options = m.Options
			if h, ok := s.svc.ModelHealth(m.ID); ok {
				hj := &HealthJSON{Calls: h.Calls, Failures: h.Failures, LastError: h.LastError,
					LastLatencyMS: h.LastLatencyMS, Breaker: h.Breaker}
				if h.LastErrorAt != nil {
					at := rfc3339(*h.LastErrorAt)
					hj.LastErrorAt = &at
				}
				d.Health = hj
			}
		}
	}
	return d, nil
}

func (s *Server) modelDetailRoutes() {
	tags := []string{"models"}
	register(s, op(http.MethodPost, "/api/v1/tasks/{code}/models", "registerModel",
		"Register an HTTP model (dynalab, openai, hf, kserve) for the task", tags, true, 404, 422),
		func(ctx context.Context, in *registerModelInput) (*modelOutput, error) {
			if _, err := s.visibleTask(ctx, in.Code); err != nil {
				return nil, err
			}
			m, err := s.svc.RegisterModel(ctx, actor(ctx), in.Code, service.NewModel{Name: in.Body.Name, Kind: in.Body.Kind,
				URL: in.Body.URL, Options: in.Body.Options, Card: in.Body.Card})
			if err != nil {
				return nil, err
			}
			d, err := s.modelDetail(ctx, m.ID, "")
			return &modelOutput{Status: http.StatusCreated, Body: d}, err
		})
	register(s, op(http.MethodGet, "/api/v1/models/{id}", "getModel",
		"A model: anyone when published, else its registrant and the task's owners (with options and health)", tags, false, 404),
		func(ctx context.Context, in *idPath) (*modelOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			d, err := s.modelDetail(ctx, id, "")
			return &modelOutput{Status: http.StatusOK, Body: d}, err
		})
}
