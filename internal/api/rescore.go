package api

import (
	"context"
	"net/http"
)

func (s *Server) rescoreRoutes() {
	register(s, op(http.MethodPost, "/api/v1/examples/{id}/rescore", "rescoreExample",
		"Ask the model again about an example whose model failed (creator, owners)", []string{"examples"}, true, 404, 409),
		func(ctx context.Context, in *idPath) (*exampleOutput, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			e, err := s.svc.RescoreExample(ctx, actor(ctx), id)
			if err != nil {
				return nil, err
			}
			return s.exampleOut(ctx, http.StatusOK, e), nil
		})
}
