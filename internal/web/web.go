// Package web serves the platform's pages: server-rendered html/template pages with typed data, htmx
// for the live parts (the model's answer, the next item to validate), one small CSS file and one
// small script, all embedded and fingerprinted. No Node step is needed to build or change it.
//
// Every page calls the rules in internal/service with the acting user; this package holds no rule
// of its own. Sessions are the service's "session" tokens kept in an HttpOnly, SameSite=Lax cookie;
// every unsafe request passes net/http's CrossOriginProtection; every answer carries a strict
// Content-Security-Policy (no inline script or style).
//
// Adding a page: write a handler with the signature of HandlerFunc, a template file
// templates/<name>.html that defines "title" and "content" (see home.html), and register both in
// routes (or, from another package, with Server.Handle and a template added through Options.Templates).
// Give the page data a type that embeds Base; render it with s.render(w, r, status, "<name>", data).
// A page that should appear in the navigation adds a NavLink in nav.
package web

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/ratelimit"
	"github.com/dynabench-go/dynabench/internal/service"
)

// Options configure the web UI.
type Options struct {
	// OpenRegistration shows the register page and accepts new accounts.
	OpenRegistration bool
	// TrustProxy believes X-Forwarded-Proto when deciding whether the session cookie is Secure.
	TrustProxy bool
	// Version is shown in the footer.
	Version string
	// Login and Register limit attempts per client address; share them with the API's so that
	// neither is a way around the other. Nil: 10 and 5 a minute of the web's own.
	Login, Register *ratelimit.Limiter
	// Templates, when set, adds page templates (files named <page>.html) to the embedded ones, for a
	// page registered from outside the package with Handle.
	Templates fs.FS
}

// Server is the web UI.
type Server struct {
	svc    *service.Service
	log    *slog.Logger
	opt    Options
	mux    *http.ServeMux
	pages  *pages
	assets *assets
	csrf   *http.CrossOriginProtection
}

// HandlerFunc is a page handler: it writes the page, or returns an error that the server renders
// as an error page (a *dynabench.Error keeps its code's status and message).
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// New builds the web UI over the service.
func New(svc *service.Service, log *slog.Logger, opt Options) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	if opt.Login == nil {
		opt.Login = ratelimit.New(10, time.Minute)
	}
	if opt.Register == nil {
		opt.Register = ratelimit.New(5, time.Minute)
	}
	a, err := loadAssets()
	if err != nil {
		return nil, err
	}
	s := &Server{svc: svc, log: log, opt: opt, mux: http.NewServeMux(), assets: a, csrf: http.NewCrossOriginProtection()}
	s.csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.renderError(w, r, dynabench.Errorf(dynabench.EFORBIDDEN,
			"this form was sent from another site, so it was refused; reload the page and try again"))
	}))
	if s.pages, err = parsePages(a, opt.Templates); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// Handle registers a page handler on the web mux (method and path pattern, as http.ServeMux).
func (s *Server) Handle(pattern string, h HandlerFunc) {
	s.mux.Handle(pattern, s.page(h))
}

// Handler returns the web UI with its middleware: panic recovery, security headers, CSRF
// protection and the session.
func (s *Server) Handler() http.Handler {
	return s.recoverer(s.secure(s.csrf.Handler(s.session(s.mux))))
}

// page adapts a HandlerFunc to http.Handler, rendering its error.
func (s *Server) page(h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.renderError(w, r, err)
		}
	})
}

// secure sets the headers every answer carries.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
			"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// recoverer turns a panic into an error page and one log line with the stack.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in page", "value", v, "path", r.URL.Path, "stack", string(debug.Stack()))
				s.renderError(w, r, errors.New("panic"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type userKey struct{}

// actor is the logged-in user, or nil.
func actor(r *http.Request) *dynabench.User { return dynabench.UserFromContext(r.Context()) }

func withToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, userKey{}, token)
}

func sessionToken(r *http.Request) string {
	t, _ := r.Context().Value(userKey{}).(string)
	return t
}
