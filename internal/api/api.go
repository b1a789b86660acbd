// Package api serves the JSON API (API.md) with huma, which also generates the OpenAPI 3.1
// document from the Go types of every route, plus the operational endpoints.
package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/service"
)

// Options configure the API.
type Options struct {
	Version string
	// Ready reports whether the database answers and its schema is current (for /readyz).
	Ready func(ctx context.Context) error
	// Registry receives the metrics; nil makes a private one.
	Registry *prometheus.Registry
	// LoginRate and RegisterRate limit attempts per client address (per minute); 0 means defaults.
	LoginRate, RegisterRate int
	// OpenRegistration allows anyone to register (the default in main).
	OpenRegistration bool
	// TrustProxy takes the client address from X-Forwarded-For (only behind a trusted proxy).
	TrustProxy bool
}

// Server is the HTTP API.
type Server struct {
	svc     *service.Service
	log     *slog.Logger
	opt     Options
	mux     *http.ServeMux
	api     huma.API
	metrics *metrics
	login   *limiter
	signup  *limiter
}

// New builds the API over the service.
func New(svc *service.Service, log *slog.Logger, opt Options) *Server {
	if opt.LoginRate <= 0 {
		opt.LoginRate = 10
	}
	if opt.RegisterRate <= 0 {
		opt.RegisterRate = 5
	}
	if opt.Registry == nil {
		opt.Registry = prometheus.NewRegistry()
	}
	s := &Server{svc: svc, log: log, opt: opt, mux: http.NewServeMux(),
		login: newLimiter(opt.LoginRate, time.Minute), signup: newLimiter(opt.RegisterRate, time.Minute)}
	s.metrics = newMetrics(opt.Registry)
	cfg := huma.DefaultConfig("Dynabench in Go", opt.Version)
	cfg.CreateHooks = nil // no $schema links in bodies: clients get exactly the documented shapes
	cfg.OpenAPIPath = "/api/v1/openapi"
	cfg.DocsPath = "/api/v1/docs"
	cfg.SchemasPath = "/api/v1/schemas"
	cfg.Info.Description = "Dynamic adversarial benchmarking: tasks, rounds, examples with a model in the loop, validations."
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "A token from register, login or POST /api/v1/me/tokens"},
	}
	s.api = humago.New(s.mux, cfg)
	s.routes()
	return s
}

// API exposes the huma API (tests read its OpenAPI document).
func (s *Server) API() huma.API { return s.api }

// Handler returns the whole HTTP handler with its middleware.
func (s *Server) Handler() http.Handler {
	return s.recoverer(s.instrument(s.authenticate(s.mux)))
}

// Mux lets other packages (the web UI) add routes.
func (s *Server) Mux() *http.ServeMux { return s.mux }

func (s *Server) routes() {
	s.opsRoutes()
	s.accountRoutes()
	s.taskRoutes()
	s.exampleRoutes()
	s.rescoreRoutes()
	s.modelRoutes()
}

// op describes one route for huma; security marks routes that need a token.
func op(method, path, id, summary string, tags []string, authed bool, errs ...int) huma.Operation {
	o := huma.Operation{OperationID: id, Method: method, Path: path, Summary: summary, Tags: tags, Errors: errs,
		MaxBodyBytes: 256 << 10}
	if authed {
		o.Security = []map[string][]string{{"bearer": {}}}
		o.Errors = append(o.Errors, http.StatusUnauthorized)
	}
	return o
}

// register adds a route whose handler returns domain errors; they are mapped to HTTP here.
func register[I, O any](s *Server, o huma.Operation, h func(ctx context.Context, in *I) (*O, error)) {
	huma.Register(s.api, o, func(ctx context.Context, in *I) (*O, error) {
		out, err := h(ctx, in)
		if err != nil {
			return nil, toHTTPError(ctx, s.log, err)
		}
		return out, nil
	})
}

func actor(ctx context.Context) *dynabench.User { return dynabench.UserFromContext(ctx) }

// idString renders an id as JSON wants it (a string).
func idString(id int64) string { return strconv.FormatInt(id, 10) }

// parseID reads an id from a path or body field; a malformed id cannot name anything.
func parseID(field, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		if field == "id" {
			return 0, dynabench.Errorf(dynabench.ENOTFOUND, "not found")
		}
		return 0, dynabench.FieldErrorf(dynabench.EINVALID, field, "not an id")
	}
	return id, nil
}

func parseIDs(field string, ss []string) ([]int64, error) {
	out := make([]int64, 0, len(ss))
	for i, s := range ss {
		id, err := parseID(fmt.Sprintf("%s[%d]", field, i), s)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }
