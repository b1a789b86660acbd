package web

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/dynabench-go/dynabench"
)

// Base is what every page's data embeds: the layout reads it.
type Base struct {
	Title   string
	User    *dynabench.User
	Nav     []NavLink
	Flash   string // a one-line notice at the top of the page
	Version string
	Path    string
}

func (b *Base) base() *Base { return b }

type baser interface{ base() *Base }

// NavLink is one entry of the navigation bar.
type NavLink struct {
	Label, Href string
	Current     bool
}

// nav lists the pages the user can reach from every page. Only pages that exist are linked.
func (s *Server) nav(r *http.Request) []NavLink {
	links := []NavLink{{Label: "Tasks", Href: "/"}}
	u := actor(r)
	switch {
	case u == nil:
		links = append(links, NavLink{Label: "Log in", Href: "/login"})
		if s.opt.OpenRegistration {
			links = append(links, NavLink{Label: "Register", Href: "/register"})
		}
	default:
		links = append(links, NavLink{Label: "Profile", Href: "/profile"})
		if u.Admin {
			links = append(links, NavLink{Label: "Admin", Href: "/admin/users"})
		}
	}
	for i := range links {
		links[i].Current = links[i].Href == r.URL.Path
	}
	return links
}

// pages holds one template set per page: the layout, the shared partials and the page's file.
type pages struct {
	sets map[string]*template.Template
}

func templateFuncs(a *assets) template.FuncMap {
	return template.FuncMap{
		"asset":    a.URL,
		"pct":      func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
		"prob":     func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
		"barw":     func(f float64, width float64) string { return fmt.Sprintf("%.1f", clamp01(f)*width) },
		"date":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") },
		"text":     valueText,
		"inc":      func(i int) int { return i + 1 },
		"hasPref":  strings.HasPrefix,
		"pathesc":  url.PathEscape,
		"queryesc": url.QueryEscape,
		"ratio": func(a, b int64) float64 {
			if b == 0 {
				return 0
			}
			return float64(a) / float64(b)
		},
		"deref": func(v any) any {
			rv := reflect.ValueOf(v)
			if rv.Kind() == reflect.Pointer {
				if rv.IsNil() {
					return nil
				}
				return rv.Elem().Interface()
			}
			return v
		},
	}
}

func clamp01(f float64) float64 { return min(max(f, 0), 1) }

func parsePages(a *assets, extra fs.FS) (*pages, error) {
	base, err := template.New("layout").Funcs(templateFuncs(a)).ParseFS(embedded, "templates/layout.html", "templates/partials.html")
	if err != nil {
		return nil, err
	}
	p := &pages{sets: map[string]*template.Template{}}
	add := func(fsys fs.FS, glob string) error {
		files, err := fs.Glob(fsys, glob)
		if err != nil {
			return err
		}
		for _, f := range files {
			name := strings.TrimSuffix(path.Base(f), ".html")
			if name == "layout" || name == "partials" {
				continue
			}
			set, err := template.Must(base.Clone()).ParseFS(fsys, f)
			if err != nil {
				return fmt.Errorf("template %s: %w", f, err)
			}
			p.sets[name] = set
		}
		return nil
	}
	if err := add(embedded, "templates/*.html"); err != nil {
		return nil, err
	}
	if extra != nil {
		if err := add(extra, "*.html"); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// render writes a whole page: the layout around the page's "content".
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, data baser) error {
	b := data.base()
	b.User, b.Nav, b.Version, b.Path = actor(r), s.nav(r), s.opt.Version, r.URL.Path
	return s.execute(w, status, page, "layout", data)
}

// fragment writes one named template of a page's set, for an htmx swap.
func (s *Server) fragment(w http.ResponseWriter, r *http.Request, status int, page, name string, data baser) error {
	b := data.base()
	b.User, b.Version, b.Path = actor(r), s.opt.Version, r.URL.Path
	return s.execute(w, status, page, name, data)
}

func (s *Server) execute(w http.ResponseWriter, status int, page, name string, data any) error {
	set, ok := s.pages.sets[page]
	if !ok {
		return fmt.Errorf("no template for page %q", page)
	}
	var buf bytes.Buffer
	if err := set.ExecuteTemplate(&buf, name, data); err != nil {
		return fmt.Errorf("render %s/%s: %w", page, name, err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// statusOf is the HTTP status of each error code (as the JSON API maps them).
var statusOf = map[string]int{
	dynabench.EMALFORMED:    http.StatusBadRequest,
	dynabench.EUNAUTHORIZED: http.StatusUnauthorized,
	dynabench.EFORBIDDEN:    http.StatusForbidden,
	dynabench.ENOTFOUND:     http.StatusNotFound,
	dynabench.ECONFLICT:     http.StatusConflict,
	dynabench.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	dynabench.EINVALID:      http.StatusUnprocessableEntity,
	dynabench.ERATELIMIT:    http.StatusTooManyRequests,
	dynabench.EMODEL:        http.StatusBadGateway,
	dynabench.EMODELTIMEOUT: http.StatusGatewayTimeout,
	dynabench.EUNAVAILABLE:  http.StatusServiceUnavailable,
	dynabench.EINTERNAL:     http.StatusInternalServerError,
}

// errorPage is the data of the error page.
type errorPage struct {
	Base
	Status  int
	Message string
}

// renderError shows err as a page: anonymous users asked to log in are sent to the login page;
// a *dynabench.Error shows its message; anything else is logged and shown as "internal error".
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, err error) {
	code := dynabench.ErrorCode(err)
	if code == dynabench.EUNAUTHORIZED && actor(r) == nil {
		s.toLogin(w, r)
		return
	}
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	msg := "Something went wrong on our side; it has been logged."
	var de *dynabench.Error
	if errors.As(err, &de) && status < 500 {
		msg = de.Message
	} else if errors.As(err, &de) && (code == dynabench.EUNAVAILABLE || code == dynabench.EMODEL || code == dynabench.EMODELTIMEOUT) {
		msg = de.Message
	} else {
		s.log.Error("page failed", "path", r.URL.Path, "err", err)
	}
	p := &errorPage{Status: status, Message: msg}
	p.Title = http.StatusText(status)
	if rerr := s.render(w, r, status, "error", p); rerr != nil {
		s.log.Error("render error page", "err", rerr)
		http.Error(w, msg, status)
	}
}

// toLogin redirects to the login page, coming back here afterwards (to the page a form was on).
func (s *Server) toLogin(w http.ResponseWriter, r *http.Request) {
	next := r.URL.RequestURI()
	if r.Method != http.MethodGet {
		next = "/"
		if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host {
			next = ref.RequestURI()
		}
	}
	target := "/login?next=" + url.QueryEscape(next)
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", target)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// valueText renders a JSON-shaped value as text.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = valueText(e)
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}
