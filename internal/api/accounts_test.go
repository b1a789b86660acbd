package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench/internal/server"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
)

func reg(username, email, password string) map[string]any {
	return map[string]any{"username": username, "email": email, "password": password}
}

// TestRegisterAndLogin uses up the register limit (5 a minute per address) on purpose: every
// attempt the handler sees counts, successful or not, and the sixth is refused.
func TestRegisterAndLogin(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		e.run(t, []scenario{
			{name: "register", method: "POST", path: "/api/v1/auth/register", body: reg("newbie", "newbie@example.com", "longenough"),
				status: 201, want: map[string]any{"user.username": "newbie", "user.id": present, "token": contains{"dbk_"}},
				save: map[string]string{"newbie": "token", "newbie_id": "user.id"}},
			{name: "token works", method: "GET", path: "/api/v1/me", who: "$newbie", status: 200,
				want: map[string]any{"username": "newbie", "email": "newbie@example.com", "id": equalVar("newbie_id")}},
			{name: "duplicate username", method: "POST", path: "/api/v1/auth/register", body: reg("newbie", "other@example.com", "longenough"),
				status: 409, want: map[string]any{"error.code": "conflict"}},
			{name: "duplicate email in other case", method: "POST", path: "/api/v1/auth/register", body: reg("newbie2", "NEWBIE@example.com", "longenough"),
				status: 409, want: map[string]any{"error.code": "conflict"}},
			{name: "bad username", method: "POST", path: "/api/v1/auth/register", body: reg("x!", "x@example.com", "longenough"),
				status: 422, want: map[string]any{"error.code": "invalid", "error.field": "username"}},
			{name: "bad password", method: "POST", path: "/api/v1/auth/register", body: reg("okname", "ok@example.com", "1234567"),
				status: 422, want: map[string]any{"error.code": "invalid", "error.field": "password"}},
			{name: "sixth attempt is rate limited", method: "POST", path: "/api/v1/auth/register", body: reg("fine", "fine@example.com", "longenough"),
				status: 429, want: map[string]any{"error.code": "rate_limited"}},
			{name: "rate limited account was not created", method: "POST", path: "/api/v1/auth/login",
				body: map[string]any{"username": "fine", "password": "longenough"}, status: 401},
			{name: "login", method: "POST", path: "/api/v1/auth/login", body: map[string]any{"username": "newbie", "password": "longenough"},
				status: 200, want: map[string]any{"user.username": "newbie", "user.id": equalVar("newbie_id"), "token": present},
				save: map[string]string{"session": "token"}},
			{name: "new session differs", method: "GET", path: "/api/v1/me", who: "$session", status: 200,
				want: map[string]any{"username": "newbie"}},
			{name: "login wrong password", method: "POST", path: "/api/v1/auth/login", body: map[string]any{"username": "newbie", "password": "wrong-password"},
				status: 401, want: map[string]any{"error.code": "unauthorized", "token": absent}, save: map[string]string{"msg1": "error.message"}},
			{name: "login unknown user, same message", method: "POST", path: "/api/v1/auth/login", body: map[string]any{"username": "nobody", "password": "wrong-password"},
				status: 401, want: map[string]any{"error.code": "unauthorized", "error.message": equalVar("msg1")}},
			{name: "admin login", method: "POST", path: "/api/v1/auth/login", body: map[string]any{"username": "admin", "password": servertest.AdminPassword},
				status: 200, want: map[string]any{"user.username": "admin"}},
			{name: "login malformed", method: "POST", path: "/api/v1/auth/login",
				body: servertest.Raw{ContentType: "application/json", Body: []byte(`{"username": "admin"`)}, status: 400,
				want: map[string]any{"error.code": "malformed"}},
		})
	})
}

// TestRegisterValidation: errors caught before the handler (malformed JSON, schema) do not count
// against the register limit; the handler's own 422s do.
func TestRegisterValidation(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		long := strings.Repeat("p", 1025)
		e.run(t, []scenario{
			{name: "short password", method: "POST", path: "/api/v1/auth/register", body: reg("pat", "pat@example.com", "short"),
				status: 422, want: map[string]any{"error.code": "invalid", "error.field": "password", "error.message": present}},
			{name: "bad email", method: "POST", path: "/api/v1/auth/register", body: reg("pat", "not-an-email", "longenough"),
				status: 422, want: map[string]any{"error.field": "email"}},
			{name: "email with display name", method: "POST", path: "/api/v1/auth/register", body: reg("pat", "Pat <pat@example.com>", "longenough"),
				status: 422, want: map[string]any{"error.field": "email"}},
			{name: "every field bad is listed", method: "POST", path: "/api/v1/auth/register", body: reg("", "nope", "x"),
				status: 422, want: map[string]any{"error.details": length(3), "error.details[0].field": "username",
					"error.details[1].field": "email", "error.details[2].field": "password"}},
			{name: "malformed JSON", method: "POST", path: "/api/v1/auth/register",
				body: servertest.Raw{ContentType: "application/json", Body: []byte(`{"username":`)}, status: 400,
				want: map[string]any{"error.code": "malformed"}},
			{name: "no body", method: "POST", path: "/api/v1/auth/register", status: 400, want: map[string]any{"error.code": "malformed"}},
			{name: "wrong type", method: "POST", path: "/api/v1/auth/register",
				body: map[string]any{"username": 5, "email": "a@example.com", "password": "longenough"}, status: 422,
				want: map[string]any{"error.code": "invalid", "error.field": "username"}},
			{name: "missing field", method: "POST", path: "/api/v1/auth/register",
				body: map[string]any{"username": "pat", "password": "longenough"}, status: 422,
				want: map[string]any{"error.code": "invalid", "error.field": "email"}},
			{name: "unknown field", method: "POST", path: "/api/v1/auth/register",
				body: map[string]any{"username": "pat", "email": "pat@example.com", "password": "longenough", "admin": true}, status: 422,
				want: map[string]any{"error.field": "admin"}},
			{name: "password too long", method: "POST", path: "/api/v1/auth/register", body: reg("pat", "pat@example.com", long),
				status: 422, want: map[string]any{"error.field": "password", "error.message": absentText(long)}},
			{name: "fifth counted attempt, after schema errors", method: "POST", path: "/api/v1/auth/register", body: reg("pat", "pat@example.com", "longenough"),
				status: 201, want: map[string]any{"user.username": "pat"}},
			{name: "sixth counted attempt", method: "POST", path: "/api/v1/auth/register", body: reg("pat2", "pat2@example.com", "longenough"),
				status: 429, want: map[string]any{"error.code": "rate_limited"}},
		})
		var login []scenario
		for i := range 10 {
			login = append(login, scenario{name: "login attempt " + string(rune('0'+i)), method: "POST", path: "/api/v1/auth/login",
				body: map[string]any{"username": "pat", "password": "wrong-password"}, status: 401})
		}
		login = append(login, scenario{name: "eleventh login", method: "POST", path: "/api/v1/auth/login",
			body: map[string]any{"username": "pat", "password": "longenough"}, status: 429, want: map[string]any{"error.code": "rate_limited", "token": absent}})
		e.run(t, login)
	})
}

func TestRegistrationClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, enginesFirst(), servertest.NoDemo, func(c *server.Config) { c.OpenRegistration = false })
	e.run(t, []scenario{
		{name: "closed", method: "POST", path: "/api/v1/auth/register", body: reg("pat", "pat@example.com", "longenough"),
			status: 403, want: map[string]any{"error.code": "forbidden"}},
		{name: "login still works", method: "POST", path: "/api/v1/auth/login", body: map[string]any{"username": "admin", "password": servertest.AdminPassword},
			status: 200},
	})
}

func TestMeAndTokens(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		e.run(t, []scenario{
			{name: "me", method: "GET", path: "/api/v1/me", who: "alice", status: 200,
				want: map[string]any{"username": "alice", "email": "alice@example.com", "roles": contains{"user"}, "totals.examples": 0,
					"stats": length(0), "created_at": present}},
			{name: "me is not admin", method: "GET", path: "/api/v1/me", who: "alice", status: 200,
				check: func(t *testing.T, e *env, r *servertest.Response) {
					for _, role := range []string{"admin", "owner:sentiment"} {
						if strings.Contains(r.String("roles"), role) {
							t.Errorf("alice has role %s: %s", role, r.Body)
						}
					}
				}},
			{name: "admin roles", method: "GET", path: "/api/v1/me", who: "admin", status: 200,
				want: map[string]any{"username": "admin", "roles": contains{"admin"}, "roles[2]": present}},
			{name: "admin owns the demo tasks", method: "GET", path: "/api/v1/me", who: "admin", status: 200,
				want: map[string]any{"roles": contains{"owner:sentiment"}}},
			{name: "anonymous", method: "GET", path: "/api/v1/me", status: 401, want: map[string]any{"error.code": "unauthorized"}},
			{name: "bad token", method: "GET", path: "/api/v1/me", who: "bad", status: 401, want: map[string]any{"error.code": "unauthorized"}},
			{name: "bad token on a public route", method: "GET", path: "/api/v1/tasks", who: "bad", status: 401},
			{name: "create token", method: "POST", path: "/api/v1/me/tokens", who: "alice", body: map[string]any{"name": "ci"},
				status: 201, want: map[string]any{"id": present, "name": "ci", "token": contains{"dbk_"}},
				save: map[string]string{"tok": "token", "tokid": "id"}},
			{name: "new token works", method: "GET", path: "/api/v1/me", who: "$tok", status: 200, want: map[string]any{"username": "alice"}},
			{name: "list tokens", method: "GET", path: "/api/v1/me/tokens", who: "alice", status: 200,
				want: map[string]any{"tokens": length(2), "tokens[0].token": absent, "tokens[1].token": absent},
				check: func(t *testing.T, e *env, r *servertest.Response) {
					found := false
					for i := range 2 {
						p := fmt.Sprintf("tokens[%d].", i)
						if r.String(p+"id") == e.vars["tokid"] {
							found = true
							if r.String(p+"name") != "ci" || r.String(p+"kind") != "api" || r.String(p+"expires_at") != "null" {
								t.Errorf("token %s listed as %s", e.vars["tokid"], r.Body)
							}
						}
					}
					if !found {
						t.Errorf("token %s not listed: %s", e.vars["tokid"], r.Body)
					}
					if strings.Contains(string(r.Body), e.vars["tok"]) {
						t.Errorf("the token list shows a token's value")
					}
				}},
			{name: "bob cannot see alice's tokens", method: "GET", path: "/api/v1/me/tokens", who: "bob", status: 200,
				want: map[string]any{"tokens": length(1)}},
			{name: "bob cannot revoke alice's token", method: "DELETE", path: "/api/v1/me/tokens/{tokid}", who: "bob", status: 404,
				want: map[string]any{"error.code": "not_found"}},
			{name: "alice's token survived bob", method: "GET", path: "/api/v1/me", who: "$tok", status: 200},
			{name: "anonymous revoke", method: "DELETE", path: "/api/v1/me/tokens/{tokid}", status: 401},
			{name: "revoke", method: "DELETE", path: "/api/v1/me/tokens/{tokid}", who: "alice", status: 204},
			{name: "revoked token is refused", method: "GET", path: "/api/v1/me", who: "$tok", status: 401,
				want: map[string]any{"error.code": "unauthorized"}},
			{name: "revoke twice", method: "DELETE", path: "/api/v1/me/tokens/{tokid}", who: "alice", status: 404},
			{name: "revoke malformed id", method: "DELETE", path: "/api/v1/me/tokens/abc", who: "alice", status: 404},
			{name: "revoke id 0", method: "DELETE", path: "/api/v1/me/tokens/0", who: "alice", status: 404},
			{name: "other tokens still work", method: "GET", path: "/api/v1/me", who: "alice", status: 200},
			{name: "token name required", method: "POST", path: "/api/v1/me/tokens", who: "alice", body: map[string]any{"name": "  "},
				status: 422, want: map[string]any{"error.field": "name"}},
			{name: "token name too long", method: "POST", path: "/api/v1/me/tokens", who: "alice", body: map[string]any{"name": strings.Repeat("n", 101)},
				status: 422, want: map[string]any{"error.field": "name"}},
			{name: "token name with NUL", method: "POST", path: "/api/v1/me/tokens", who: "alice", body: map[string]any{"name": "a\x00"},
				status: 422, want: map[string]any{"error.field": "name"}},
			{name: "login with NUL", method: "POST", path: "/api/v1/auth/login", body: map[string]any{"username": "a\x00", "password": "longenough"},
				status: 422, want: map[string]any{"error.field": "username"}},
			{name: "anonymous token", method: "POST", path: "/api/v1/me/tokens", body: map[string]any{"name": "x"}, status: 401},
		})
		e.WantStats(t, "sentiment", 1, 0, 0, 0, 0)
	})
}

// TestAuthorizationHeader: only bearer tokens are credentials; anything else is refused, not ignored.
func TestAuthorizationHeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t, enginesFirst(), servertest.NoDemo)
	for _, h := range []string{"Basic YWRtaW46YWRtaW5wYXNzMTIz", "Bearer", "Bearer ", "Bearer " + strings.Repeat("x", 300),
		"Bearer " + e.tokens["alice"] + "x", "Token " + e.tokens["alice"]} {
		req, _ := http.NewRequest(http.MethodGet, e.URL+"/api/v1/me", nil)
		req.Header.Set("Authorization", h)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %.20q…: status %d, want 401", h, resp.StatusCode)
		}
	}
	// The scheme is case-insensitive.
	r := e.Do(t, http.MethodGet, "/api/v1/me", "", nil)
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("anonymous /me: %d", r.Status)
	}
	req, _ := http.NewRequest(http.MethodGet, e.URL+"/api/v1/me", nil)
	req.Header.Set("Authorization", "bearer "+e.tokens["alice"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("Authorization: bearer <token>: status %d, want 200", resp.StatusCode)
	}
}

func TestAdminUsers(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		e.vars["alice_id"] = itoa(e.users["alice"].ID)
		e.vars["admin_id"] = itoa(e.AdminID)
		e.run(t, []scenario{
			{name: "list anonymous", method: "GET", path: "/api/v1/users", status: 401},
			{name: "list as user", method: "GET", path: "/api/v1/users", who: "alice", status: 403},
			{name: "list", method: "GET", path: "/api/v1/users", who: "admin", status: 200,
				want: map[string]any{"users": length(6), "users[0].username": "admin", "users[0].admin": true, "users[1].username": "alice",
					"users[1].email": "alice@example.com", "users[1].admin": false, "next_cursor": ""}},
			{name: "first page", method: "GET", path: "/api/v1/users?limit=4", who: "admin", status: 200,
				want: map[string]any{"users": length(4), "users[3].username": "carol", "next_cursor": present},
				save: map[string]string{"cursor": "next_cursor"}},
			{name: "second page", method: "GET", path: "/api/v1/users?limit=4&cursor={cursor}", who: "admin", status: 200,
				want: map[string]any{"users": length(2), "users[0].username": "dave", "users[1].username": "erin", "next_cursor": ""}},
			{name: "limit too large", method: "GET", path: "/api/v1/users?limit=501", who: "admin", status: 422},
			{name: "bad cursor", method: "GET", path: "/api/v1/users?cursor=abc", who: "admin", status: 422},
			{name: "grant as user", method: "PUT", path: "/api/v1/users/{alice_id}/role", who: "bob", body: map[string]any{"admin": true}, status: 403},
			{name: "alice cannot create tasks yet", method: "POST", path: "/api/v1/tasks", who: "alice",
				body: map[string]any{"code": "alices", "name": "A", "config": sentimentConfig}, status: 403},
			{name: "grant", method: "PUT", path: "/api/v1/users/{alice_id}/role", who: "admin", body: map[string]any{"admin": true}, status: 204},
			{name: "alice is admin", method: "GET", path: "/api/v1/me", who: "alice", status: 200, want: map[string]any{"roles": contains{"admin"}}},
			{name: "alice creates a task", method: "POST", path: "/api/v1/tasks", who: "alice",
				body: map[string]any{"code": "alices", "name": "A", "config": sentimentConfig}, status: 201},
			{name: "no self-demotion", method: "PUT", path: "/api/v1/users/{admin_id}/role", who: "admin", body: map[string]any{"admin": false},
				status: 422},
			{name: "alice demotes admin", method: "PUT", path: "/api/v1/users/{admin_id}/role", who: "alice", body: map[string]any{"admin": false},
				status: 204},
			{name: "admin is no longer admin", method: "GET", path: "/api/v1/users", who: "admin", status: 403},
			{name: "unknown user", method: "PUT", path: "/api/v1/users/99999999/role", who: "alice", body: map[string]any{"admin": true}, status: 404},
			{name: "malformed id", method: "PUT", path: "/api/v1/users/abc/role", who: "alice", body: map[string]any{"admin": true}, status: 404},
		})
	})
}
