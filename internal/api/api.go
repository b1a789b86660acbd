// Package api serves the JSON API (API.md) with huma, which also generates the OpenAPI 3.1
// document from the Go types of every route, plus the operational endpoints.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/ratelimit"
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
	// Login and Register, when set, are the limiters to use (shared with the web pages, so that
	// neither is a way around the other); LoginRate and RegisterRate then do not apply.
	Login, Register *ratelimit.Limiter
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
	login   *ratelimit.Limiter
	signup  *ratelimit.Limiter
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
		login: opt.Login, signup: opt.Register}
	if s.login == nil {
		s.login = ratelimit.New(opt.LoginRate, time.Minute)
	}
	if s.signup == nil {
		s.signup = ratelimit.New(opt.RegisterRate, time.Minute)
	}
	s.metrics = newMetrics(opt.Registry)
	cfg := huma.DefaultConfig("Dynabench in Go", opt.Version)
	cfg.CreateHooks = nil // no $schema links in bodies: clients get exactly the documented shapes
	cfg.Formats = map[string]huma.Format{"application/json": strictJSON, "json": strictJSON}
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

// strictJSON refuses request bodies that are not UTF-8 (RFC 8259 §8.1) instead of letting
// encoding/json silently replace the bad bytes with U+FFFD and store text the client never sent.
var strictJSON = huma.Format{
	Marshal: huma.DefaultJSONFormat.Marshal,
	Unmarshal: func(data []byte, v any) error {
		if !utf8.Valid(data) {
			return errors.New("the body is not valid UTF-8")
		}
		return json.Unmarshal(data, v)
	},
}

// Handler returns the whole HTTP handler with its middleware.
func (s *Server) Handler() http.Handler {
	return s.recoverer(s.instrument(s.authenticate(s.unmatched(s.mux))))
}

// unmatched answers requests under /api/ that no route takes in the API's JSON error shape, instead
// of the mux's plain-text 404 and 405 (which keep their status and Allow header).
func (s *Server) unmatched(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := s.mux.Handler(r); pattern == "" && strings.HasPrefix(r.URL.Path, "/api/") {
			w = &jsonFallback{ResponseWriter: w}
		}
		next.ServeHTTP(w, r)
	})
}

// jsonFallback replaces the body of the mux's 404 and 405 answers with an error object.
type jsonFallback struct {
	http.ResponseWriter
	replaced bool
}

func (f *jsonFallback) WriteHeader(status int) {
	if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
		f.ResponseWriter.WriteHeader(status)
		return
	}
	f.replaced = true
	code, msg := dynabench.ENOTFOUND, "no such route: see /api/v1/openapi.json"
	if status == http.StatusMethodNotAllowed {
		code, msg = "method_not_allowed", "the route does not take this method; see the Allow header"
	}
	writeError(f.ResponseWriter, status, code, "", msg)
}

func (f *jsonFallback) Write(b []byte) (int, error) {
	if f.replaced {
		return len(b), nil
	}
	return f.ResponseWriter.Write(b)
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
	s.modelDetailRoutes()
	s.trainRoutes()
	s.evaluationRoutes()
	s.releaseRoutes()
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
		if err := noNUL(reflect.ValueOf(in), ""); err != nil {
			return nil, toHTTPError(ctx, s.log, err)
		}
		out, err := h(ctx, in)
		if err != nil {
			return nil, toHTTPError(ctx, s.log, err)
		}
		return out, nil
	})
}

// noNUL refuses a request with U+0000 in any string of its parameters or body: PostgreSQL cannot
// store it (the insert would fail as a 500) and no field has a use for it. Raw bodies ([]byte) are
// checked where they are parsed.
func noNUL(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return noNUL(v.Elem(), path)
		}
	case reflect.String:
		if strings.IndexByte(v.String(), 0) >= 0 {
			return dynabench.FieldErrorf(dynabench.EINVALID, path, "may not contain NUL (U+0000) characters")
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() {
				if err := noNUL(v.Field(i), joinPath(path, paramName(f))); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			k := fmt.Sprint(it.Key().Interface())
			if strings.IndexByte(k, 0) >= 0 {
				return dynabench.FieldErrorf(dynabench.EINVALID, path, "may not contain NUL (U+0000) characters")
			}
			if err := noNUL(it.Value(), joinPath(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := range v.Len() {
				if err := noNUL(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// paramName is how a field of an input struct is named in errors: its JSON, path or query name;
// nothing for the Body, whose fields are named from the top as in every other error.
func paramName(f reflect.StructField) string {
	for _, tag := range []string{"json", "path", "query", "header"} {
		if name, _, _ := strings.Cut(f.Tag.Get(tag), ","); name != "" && name != "-" {
			return name
		}
	}
	if f.Name == "Body" || f.Anonymous {
		return ""
	}
	return f.Name
}

func joinPath(path, name string) string {
	if path == "" || name == "" {
		return path + name
	}
	return path + "." + name
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
