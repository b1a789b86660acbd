package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

// TestLoginRateLimitShared: password guesses through the login page and the API count against one
// limit per address (10 a minute), so neither is a way around the other; the page says how long
// to wait and keeps the username.
func TestLoginRateLimitShared(t *testing.T) {
	srv := servertest.Start(t, sqlstoretest.Engines()[0], servertest.NoDemo)
	srv.User(t, "alice")
	for i := range 5 {
		if r := srv.Do(t, "POST", "/api/v1/auth/login", "", map[string]any{"username": "alice", "password": "wrong-password"}); r.Status != http.StatusUnauthorized {
			t.Fatalf("API guess %d: %d", i+1, r.Status)
		}
	}
	v := newVisitor(srv)
	for i := range 5 {
		if p := v.post(t, "/login", url.Values{"username": {"alice"}, "password": {"wrong-password"}}); p.Status != http.StatusUnauthorized {
			t.Fatalf("page guess %d: %d", i+1, p.Status)
		}
	}
	p := v.post(t, "/login", url.Values{"username": {"alice"}, "password": {"password-alice"}})
	if p.Status != http.StatusTooManyRequests || !strings.Contains(p.Body, "try again in") || !strings.Contains(p.Body, `value="alice"`) {
		t.Fatalf("the 11th attempt: %d\n%s", p.Status, p.Body)
	}
	if r := srv.Do(t, "POST", "/api/v1/auth/login", "", map[string]any{"username": "alice", "password": "password-alice"}); r.Status != http.StatusTooManyRequests {
		t.Fatalf("API after the page's guesses: %d", r.Status)
	}
}
