package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dynabench-go/dynabench"
)

type statusBody struct {
	Body struct {
		Status  string `json:"status" example:"ok"`
		Version string `json:"version,omitempty"`
	}
}

func (s *Server) opsRoutes() {
	ops := []string{"operations"}
	register(s, op(http.MethodGet, "/healthz", "healthz", "Liveness: 200 while the process is up", ops, false),
		func(ctx context.Context, _ *struct{}) (*statusBody, error) {
			out := &statusBody{}
			out.Body.Status, out.Body.Version = "ok", s.opt.Version
			return out, nil
		})
	register(s, op(http.MethodGet, "/readyz", "readyz", "Readiness: 200 when the database answers and migrations are current", ops, false, 503),
		func(ctx context.Context, _ *struct{}) (*statusBody, error) {
			if s.opt.Ready != nil {
				ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				if err := s.opt.Ready(ctx); err != nil {
					s.log.Warn("not ready", "err", err)
					return nil, dynabench.Errorf(dynabench.EUNAVAILABLE, "not ready: the database is unreachable or its schema is not current")
				}
			}
			out := &statusBody{}
			out.Body.Status, out.Body.Version = "ready", s.opt.Version
			return out, nil
		})
	// huma serves its document itself, undocumented; API.md lists it, so describe it too.
	s.api.OpenAPI().AddOperation(&huma.Operation{OperationID: "openapi", Method: http.MethodGet, Path: "/api/v1/openapi.json",
		Summary: "This OpenAPI 3.1 document", Tags: ops, Responses: map[string]*huma.Response{"200": {Description: "The OpenAPI document",
			Content: map[string]*huma.MediaType{"application/openapi+json": {Schema: &huma.Schema{Type: "object"}}}}}})
	metricsHandler := promhttp.HandlerFor(s.opt.Registry, promhttp.HandlerOpts{})
	mo := op(http.MethodGet, "/metrics", "metrics", "Prometheus metrics (text exposition format)", ops, false)
	mo.Responses = map[string]*huma.Response{"200": {Description: "Prometheus text format",
		Content: map[string]*huma.MediaType{"text/plain": {Schema: &huma.Schema{Type: "string"}}}}}
	huma.Register(s.api, mo, func(ctx context.Context, _ *struct{}) (*huma.StreamResponse, error) {
		return &huma.StreamResponse{Body: func(hctx huma.Context) {
			r, w := humago.Unwrap(hctx)
			metricsHandler.ServeHTTP(w, r)
		}}, nil
	})
}
