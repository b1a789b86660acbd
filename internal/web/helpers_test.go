package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
)

// visitor is a browser without JavaScript: a cookie jar, no redirect following, forms posted as
// application/x-www-form-urlencoded.
type visitor struct {
	srv *servertest.Server
	c   *http.Client
}

// page is one answer.
type page struct {
	Status   int
	Location string
	Header   http.Header
	Body     string
}

func newVisitor(srv *servertest.Server) *visitor {
	jar, _ := cookiejar.New(nil)
	return &visitor{srv: srv, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// loggedIn returns a visitor logged in through the login form.
func loggedIn(t testing.TB, srv *servertest.Server, username, password string) *visitor {
	t.Helper()
	v := newVisitor(srv)
	p := v.post(t, "/login", url.Values{"username": {username}, "password": {password}, "next": {"/"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("login %s: status %d\n%s", username, p.Status, p.Body)
	}
	return v
}

func (v *visitor) do(t testing.TB, req *http.Request) *page {
	t.Helper()
	resp, err := v.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode >= 500 {
		t.Errorf("%s %s: status %d\n%s", req.Method, req.URL, resp.StatusCode, b)
	}
	return &page{Status: resp.StatusCode, Location: resp.Header.Get("Location"), Header: resp.Header, Body: string(b)}
}

func (v *visitor) get(t testing.TB, path string) *page {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, v.srv.URL+path, nil)
	return v.do(t, req)
}

func (v *visitor) post(t testing.TB, path string, form url.Values) *page {
	t.Helper()
	return v.postWith(t, path, form, nil)
}

func (v *visitor) postWith(t testing.TB, path string, form url.Values, header http.Header) *page {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, v.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, vs := range header {
		req.Header[k] = vs
	}
	return v.do(t, req)
}

// has reports whether the HTML has an element matching a simple selector: "#id", ".class",
// "tag", "tag[attr=value]", "[attr=value]" or "[attr]".
func has(html, sel string) bool {
	return selectorRE(sel).MatchString(html)
}

var attrSel = regexp.MustCompile(`^([a-z0-9]*)\[([a-z-]+)(?:=([^\]]*))?\]$`)

func selectorRE(sel string) *regexp.Regexp {
	q := regexp.QuoteMeta
	switch {
	case strings.HasPrefix(sel, "#"):
		return regexp.MustCompile(`<[a-z0-9]+[^>]*\sid="` + q(sel[1:]) + `"`)
	case strings.HasPrefix(sel, "."):
		return regexp.MustCompile(`<[a-z0-9]+[^>]*\sclass="(?:[^"]*\s)?` + q(sel[1:]) + `(?:\s[^"]*)?"`)
	case attrSel.MatchString(sel):
		m := attrSel.FindStringSubmatch(sel)
		tag := `[a-z0-9]+`
		if m[1] != "" {
			tag = q(m[1])
		}
		val := `(?:="[^"]*")?`
		if m[3] != "" {
			val = `="` + q(strings.Trim(m[3], `"`)) + `"`
		}
		return regexp.MustCompile(`<` + tag + `\s[^>]*\b` + q(m[2]) + val)
	}
	return regexp.MustCompile(`<` + q(sel) + `[\s>]`)
}

// follow GETs path and follows one redirect (the create page names its context in the URL).
func (v *visitor) follow(t testing.TB, path string) *page {
	t.Helper()
	p := v.get(t, path)
	if p.Status == http.StatusSeeOther {
		return v.get(t, p.Location)
	}
	return p
}

// contextOf returns the id of the context a create page shows.
func contextOf(t testing.TB, html string) string {
	t.Helper()
	m := regexp.MustCompile(`name="context_id" value="(\d+)"`).FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no context_id in the create page:\n%s", html)
	}
	return m[1]
}

// makeOwner makes the user an owner of the task.
func makeOwner(t testing.TB, srv *servertest.Server, code string, userID int64) {
	t.Helper()
	if err := srv.Service.Store.AddTaskOwner(context.Background(), srv.Task(t, code).ID, userID); err != nil {
		t.Fatal(err)
	}
}

// admin returns the bootstrap admin as a user value.
func admin(t testing.TB, srv *servertest.Server) *dynabench.User {
	t.Helper()
	u, err := srv.Service.Store.FindUserByID(context.Background(), srv.AdminID)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
