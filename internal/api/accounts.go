package api

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/ratelimit"
)

// UserJSON is a user as others may see it.
type UserJSON struct {
	ID       string `json:"id"`
	Username string `json:"username"`
}

// MeJSON is the caller's own account.
type MeJSON struct {
	ID        string               `json:"id"`
	Username  string               `json:"username"`
	Email     string               `json:"email"`
	Roles     []string             `json:"roles" doc:"admin and/or owner:<task code>"`
	CreatedAt string               `json:"created_at"`
	Stats     map[string]StatsJSON `json:"stats" doc:"Per task code: the caller's counters summed over rounds"`
	Totals    StatsJSON            `json:"totals"`
}

// StatsJSON is an annotator's counters.
type StatsJSON struct {
	Examples       int64   `json:"examples"`
	Fooled         int64   `json:"fooled"`
	VerifiedFooled int64   `json:"verified_fooled"`
	RejectedFooled int64   `json:"rejected_fooled"`
	Retracted      int64   `json:"retracted"`
	Validations    int64   `json:"validations"`
	MER            float64 `json:"mer" doc:"fooled / examples"`
	VMER           float64 `json:"vmer" doc:"verified_fooled / examples"`
}

func statsJSON(a dynabench.AnnotatorStats) StatsJSON {
	st := StatsJSON{Examples: a.Submitted, Fooled: a.Fooled, VerifiedFooled: a.VerifiedFooled,
		RejectedFooled: a.RejectedFooled, Retracted: a.Retracted, Validations: a.Validations}
	if a.Submitted > 0 {
		st.MER = float64(a.Fooled) / float64(a.Submitted)
		st.VMER = float64(a.VerifiedFooled) / float64(a.Submitted)
	}
	return st
}

type registerInput struct {
	Body struct {
		Username string `json:"username" maxLength:"100"`
		Email    string `json:"email" maxLength:"254"`
		Password string `json:"password" maxLength:"1024"`
	}
}

type loginInput struct {
	Body struct {
		Username string `json:"username" maxLength:"100"`
		Password string `json:"password" maxLength:"1024"`
	}
}

type authOutput struct {
	Status int
	Body   struct {
		User  UserJSON `json:"user"`
		Token string   `json:"token" doc:"Bearer token for the Authorization header; shown once"`
	}
}

type meOutput struct{ Body MeJSON }

type tokenInput struct {
	Body struct {
		Name string `json:"name" maxLength:"100"`
	}
}

type tokenOutput struct {
	Status int
	Body   struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		Token string `json:"token" doc:"Shown once; only its hash is stored"`
	}
}

// TokenJSON describes a token without its value.
type TokenJSON struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Kind      string  `json:"kind" enum:"api,session"`
	CreatedAt string  `json:"created_at"`
	ExpiresAt *string `json:"expires_at"`
}

type tokensOutput struct {
	Body struct {
		Tokens     []TokenJSON `json:"tokens"`
		NextCursor string      `json:"next_cursor"`
	}
}

type idPath struct {
	ID string `path:"id" doc:"Numeric id"`
}

type noContent struct{ Status int }

// limited applies a rate limiter keyed by the client address; the error is a 429 with the wait.
func limited(l *ratelimit.Limiter, ctx context.Context) error {
	ok, wait := l.Allow(client(ctx), time.Now())
	if ok {
		return nil
	}
	return tooMany(wait)
}

func tooMany(wait time.Duration) error {
	return dynabench.Errorf(dynabench.ERATELIMIT, "too many attempts; try again in %d s", int(math.Ceil(wait.Seconds())))
}

func (s *Server) accountRoutes() {
	tags := []string{"accounts"}
	register(s, op(http.MethodPost, "/api/v1/auth/register", "register", "Create an account", tags, false, 409, 422, 429, 403),
		func(ctx context.Context, in *registerInput) (*authOutput, error) {
			if !s.opt.OpenRegistration {
				return nil, dynabench.Errorf(dynabench.EFORBIDDEN, "registration is closed; ask an admin for an account")
			}
			if err := limited(s.signup, ctx); err != nil {
				return nil, err
			}
			u, token, err := s.svc.Register(ctx, in.Body.Username, in.Body.Email, in.Body.Password)
			if err != nil {
				return nil, err
			}
			out := &authOutput{Status: http.StatusCreated}
			out.Body.User, out.Body.Token = UserJSON{ID: idString(u.ID), Username: u.Username}, token
			return out, nil
		})
	register(s, op(http.MethodPost, "/api/v1/auth/login", "login", "Log in and get a session token", tags, false, 401, 429),
		func(ctx context.Context, in *loginInput) (*authOutput, error) {
			// Failed attempts count: a user who types the password right is never held back.
			if blocked, wait := s.login.Blocked(client(ctx), time.Now()); blocked {
				return nil, tooMany(wait)
			}
			u, token, err := s.svc.Login(ctx, in.Body.Username, in.Body.Password)
			if dynabench.IsCode(err, dynabench.EUNAUTHORIZED) {
				s.login.Add(client(ctx), time.Now())
			}
			if err != nil {
				return nil, err
			}
			out := &authOutput{Status: http.StatusOK}
			out.Body.User, out.Body.Token = UserJSON{ID: idString(u.ID), Username: u.Username}, token
			return out, nil
		})
	register(s, op(http.MethodGet, "/api/v1/me", "getMe", "The caller's account, roles and counters", tags, true),
		func(ctx context.Context, _ *struct{}) (*meOutput, error) {
			u := actor(ctx)
			stats, err := s.svc.Me(ctx, u)
			if err != nil {
				return nil, err
			}
			roles, err := s.svc.Roles(ctx, u)
			if err != nil {
				return nil, err
			}
			me := MeJSON{ID: idString(u.ID), Username: u.Username, Email: u.Email, Roles: roles,
				CreatedAt: rfc3339(u.CreatedAt), Stats: map[string]StatsJSON{}}
			var total dynabench.AnnotatorStats
			for code, st := range stats {
				me.Stats[code] = statsJSON(st)
				total.Submitted += st.Submitted
				total.Fooled += st.Fooled
				total.VerifiedFooled += st.VerifiedFooled
				total.RejectedFooled += st.RejectedFooled
				total.Retracted += st.Retracted
				total.Validations += st.Validations
			}
			me.Totals = statsJSON(total)
			return &meOutput{Body: me}, nil
		})
	register(s, op(http.MethodPost, "/api/v1/me/tokens", "createToken", "Create an API token (shown once)", tags, true, 422),
		func(ctx context.Context, in *tokenInput) (*tokenOutput, error) {
			t, token, err := s.svc.CreateAPIToken(ctx, actor(ctx), in.Body.Name)
			if err != nil {
				return nil, err
			}
			out := &tokenOutput{Status: http.StatusCreated}
			out.Body.ID, out.Body.Name, out.Body.Token = idString(t.ID), t.Name, token
			return out, nil
		})
	register(s, op(http.MethodGet, "/api/v1/me/tokens", "listTokens", "The caller's tokens (never their values)", tags, true),
		func(ctx context.Context, _ *struct{}) (*tokensOutput, error) {
			ts, err := s.svc.ListTokens(ctx, actor(ctx))
			if err != nil {
				return nil, err
			}
			out := &tokensOutput{}
			out.Body.Tokens = make([]TokenJSON, 0, len(ts))
			for _, t := range ts {
				tj := TokenJSON{ID: idString(t.ID), Name: t.Name, Kind: t.Kind, CreatedAt: rfc3339(t.CreatedAt)}
				if t.ExpiresAt != nil {
					e := rfc3339(*t.ExpiresAt)
					tj.ExpiresAt = &e
				}
				out.Body.Tokens = append(out.Body.Tokens, tj)
			}
			return out, nil
		})
	register(s, op(http.MethodDelete, "/api/v1/me/tokens/{id}", "revokeToken", "Revoke one of the caller's tokens", tags, true, 404),
		func(ctx context.Context, in *idPath) (*noContent, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			if err := s.svc.RevokeToken(ctx, actor(ctx), id); err != nil {
				return nil, err
			}
			return &noContent{Status: http.StatusNoContent}, nil
		})
	s.adminRoutes()
}

type usersOutput struct {
	Body struct {
		Users      []AdminUserJSON `json:"users"`
		NextCursor string          `json:"next_cursor"`
	}
}

// AdminUserJSON is a user as admins see it.
type AdminUserJSON struct {
	ID        string `json:"id"`
	Username  string `json:"username"`
	Email     string `json:"email"`
	Admin     bool   `json:"admin"`
	CreatedAt string `json:"created_at"`
}

type listInput struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"500" default:"50"`
	Cursor string `query:"cursor"`
}

type roleInput struct {
	ID   string `path:"id"`
	Body struct {
		Admin bool `json:"admin"`
	}
}

func (s *Server) adminRoutes() {
	tags := []string{"admin"}
	register(s, op(http.MethodGet, "/api/v1/users", "listUsers", "List users (admins)", tags, true, 403),
		func(ctx context.Context, in *listInput) (*usersOutput, error) {
			var after int64
			if in.Cursor != "" {
				var err error
				if after, err = parseID("cursor", in.Cursor); err != nil {
					return nil, err
				}
			}
			users, err := s.svc.Users(ctx, actor(ctx), after, in.Limit+1)
			if err != nil {
				return nil, err
			}
			out := &usersOutput{}
			out.Body.Users = []AdminUserJSON{}
			for i, x := range users {
				if i == in.Limit {
					out.Body.NextCursor = fmt.Sprint(users[i-1].ID)
					break
				}
				out.Body.Users = append(out.Body.Users, AdminUserJSON{ID: idString(x.ID), Username: x.Username,
					Email: x.Email, Admin: x.Admin, CreatedAt: rfc3339(x.CreatedAt)})
			}
			return out, nil
		})
	register(s, op(http.MethodPut, "/api/v1/users/{id}/role", "setUserRole", "Grant or revoke the admin role (admins)", tags, true, 403, 404, 422),
		func(ctx context.Context, in *roleInput) (*noContent, error) {
			id, err := parseID("id", in.ID)
			if err != nil {
				return nil, err
			}
			if err := s.svc.SetAdmin(ctx, actor(ctx), id, in.Body.Admin); err != nil {
				return nil, err
			}
			return &noContent{Status: http.StatusNoContent}, nil
		})
}
