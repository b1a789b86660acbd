package api

import (
	"context"
	"net/http"

	"github.com/dynabench-go/dynabench/internal/service"
)

type trainInput struct {
	Code string `path:"code" maxLength:"64"`
	Body struct {
		Name     string `json:"name" maxLength:"100"`
		Rounds   []int  `json:"rounds,omitempty" maxItems:"100" doc:"Rounds whose verified examples to train on"`
		SeedData *bool  `json:"seed_data,omitempty" doc:"Also train on the task's seed set when it has one (default true)"`
		Seed     uint64 `json:"seed,omitempty" doc:"Random seed; the same data and seed give the same model"`
		Publish  bool   `json:"publish,omitempty"`
		// ReleasedOnly: only the train splits of the released rounds listed (never their dev or test).
		ReleasedOnly bool `json:"released_only,omitempty" doc:"Train only on the train splits of the (released) rounds, never on their dev or test examples"`
	}
}

type trainOutput struct {
	Status int
	Body   struct {
		Model    ModelDetailJSON `json:"model"`
		Manifest map[string]any  `json:"manifest" doc:"Sources with their hashes, seed, hyperparameters, held-out scores"`
	}
}

func (s *Server) trainRoutes() {
	o := op(http.MethodPost, "/api/v1/tasks/{code}/models/train", "trainModel",
		"Train a built-in model on the task's seed set and rounds' verified examples (owners)", []string{"models"}, true, 403, 404, 422)
	o.BodyReadTimeout = 0
	register(s, o, func(ctx context.Context, in *trainInput) (*trainOutput, error) {
		seedData := true
		if in.Body.SeedData != nil {
			seedData = *in.Body.SeedData
		}
		m, art, err := s.svc.TrainModel(ctx, actor(ctx), in.Code, service.TrainRequest{Name: in.Body.Name,
			Rounds: in.Body.Rounds, SeedData: seedData, Seed: in.Body.Seed, Publish: in.Body.Publish, ReleasedOnly: in.Body.ReleasedOnly})
		if err != nil {
			return nil, err
		}
		d, err := s.modelDetail(ctx, m.ID, "")
		if err != nil {
			return nil, err
		}
		out := &trainOutput{Status: http.StatusCreated}
		out.Body.Model, out.Body.Manifest = d, art.Manifest
		return out, nil
	})
}
