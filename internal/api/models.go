package api

import (
	"context"
	"net/http"
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
