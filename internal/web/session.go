package web

import (
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/ratelimit"
)

// sessionCookie holds the service's session token. Only its hash is stored server-side.
const sessionCookie = "dynabench_session"

// session resolves the session cookie to the acting user. A stale cookie is cleared.
func (s *Server) session(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(sessionCookie)
		if err != nil || c.Value == "" {
			next.ServeHTTP(w, r)
			return
		}
		u, err := s.svc.Authenticate(r.Context(), c.Value)
		switch {
		case err == nil:
			ctx := withToken(dynabench.NewContextWithUser(r.Context(), u), c.Value)
			r = r.WithContext(ctx)
		case dynabench.IsCode(err, dynabench.EUNAUTHORIZED):
			s.clearSession(w, r)
		default:
			s.renderError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// secureRequest reports whether the browser reached us over TLS (directly or through a trusted proxy).
func (s *Server) secureRequest(r *http.Request) bool {
	return r.TLS != nil || (s.opt.TrustProxy && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"))
}

func (s *Server) setSession(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureRequest(r), MaxAge: int(s.svc.SessionTTL.Seconds())})
}

func (s *Server) clearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureRequest(r), MaxAge: -1})
}

// localNext returns a same-site path to go to after logging in ("/" for anything else).
func localNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") ||
		strings.HasPrefix(next, "/\\") || u.Host != "" || u.Scheme != "" {
		return "/"
	}
	return next
}

// accountPage is the data of the login and register pages.
type accountPage struct {
	Base
	Form
	Next             string
	Username, Email  string
	OpenRegistration bool
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) error {
	if actor(r) != nil {
		http.Redirect(w, r, localNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return nil
	}
	p := &accountPage{Next: localNext(r.URL.Query().Get("next")), OpenRegistration: s.opt.OpenRegistration}
	p.Title = "Log in"
	return s.render(w, r, http.StatusOK, "login", p)
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	p := &accountPage{Next: localNext(r.PostFormValue("next")), Username: r.PostFormValue("username"),
		OpenRegistration: s.opt.OpenRegistration}
	p.Title = "Log in"
	// Failed attempts count (shared with the API): a user who types the password right is never held back.
	addr := ratelimit.ClientAddr(r, s.opt.TrustProxy)
	if blocked, wait := s.opt.Login.Blocked(addr, time.Now()); blocked {
		p.Fail(tooMany(wait))
		return s.render(w, r, http.StatusTooManyRequests, "login", p)
	}
	_, token, err := s.svc.Login(r.Context(), p.Username, r.PostFormValue("password"))
	if dynabench.IsCode(err, dynabench.EUNAUTHORIZED) {
		s.opt.Login.Add(addr, time.Now())
	}
	if err != nil {
		if !p.Fail(err) {
			return err
		}
		return s.render(w, r, statusFor(err), "login", p)
	}
	s.setSession(w, r, token)
	http.Redirect(w, r, p.Next, http.StatusSeeOther)
	return nil
}

func (s *Server) registerPage(w http.ResponseWriter, r *http.Request) error {
	if !s.opt.OpenRegistration {
		return dynabench.Errorf(dynabench.EFORBIDDEN, "registration is closed here; ask an admin for an account")
	}
	p := &accountPage{Next: localNext(r.URL.Query().Get("next")), OpenRegistration: true}
	p.Title = "Register"
	return s.render(w, r, http.StatusOK, "register", p)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) error {
	if !s.opt.OpenRegistration {
		return dynabench.Errorf(dynabench.EFORBIDDEN, "registration is closed here; ask an admin for an account")
	}
	p := &accountPage{Next: localNext(r.PostFormValue("next")), Username: r.PostFormValue("username"),
		Email: r.PostFormValue("email"), OpenRegistration: true}
	p.Title = "Register"
	if err := s.limit(r, s.opt.Register); err != nil {
		p.Fail(err)
		return s.render(w, r, http.StatusTooManyRequests, "register", p)
	}
	_, token, err := s.svc.Register(r.Context(), p.Username, p.Email, r.PostFormValue("password"))
	if err != nil {
		if !p.Fail(err) {
			return err
		}
		return s.render(w, r, statusFor(err), "register", p)
	}
	s.setSession(w, r, token)
	http.Redirect(w, r, p.Next, http.StatusSeeOther)
	return nil
}

// limit counts an attempt from the request's address; a rate_limited error says how long to wait.
func (s *Server) limit(r *http.Request, l *ratelimit.Limiter) error {
	ok, wait := l.Allow(ratelimit.ClientAddr(r, s.opt.TrustProxy), time.Now())
	if ok {
		return nil
	}
	return tooMany(wait)
}

func tooMany(wait time.Duration) error {
	return dynabench.Errorf(dynabench.ERATELIMIT, "too many attempts from your address; try again in %d s", int(math.Ceil(wait.Seconds())))
}

// logout revokes the session token and clears the cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if tok := sessionToken(r); tok != "" {
		if err := s.svc.Logout(r.Context(), tok); err != nil {
			return err
		}
	}
	s.clearSession(w, r)
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}
