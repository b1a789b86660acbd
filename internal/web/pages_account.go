package web

import (
	"net/http"
	"sort"

	"github.com/dynabench-go/dynabench"
)

// profilePage is the user's own page: stats per task, roles, API tokens.
type profilePage struct {
	Base
	Form
	Stats    []taskStats
	Roles    []string
	Tokens   []*dynabench.Token
	NewToken string // shown once, right after it was created
	NewName  string
}

type taskStats struct {
	Code string
	dynabench.AnnotatorStats
}

func (s *Server) profile(w http.ResponseWriter, r *http.Request) error {
	return s.renderProfile(w, r, &profilePage{}, http.StatusOK)
}

func (s *Server) renderProfile(w http.ResponseWriter, r *http.Request, p *profilePage, status int) error {
	ctx, u := r.Context(), actor(r)
	if u == nil {
		s.toLogin(w, r)
		return nil
	}
	p.Title = "Profile · " + u.Username
	stats, err := s.svc.Me(ctx, u)
	if err != nil {
		return err
	}
	for code, st := range stats {
		p.Stats = append(p.Stats, taskStats{Code: code, AnnotatorStats: st})
	}
	sort.Slice(p.Stats, func(i, j int) bool { return p.Stats[i].Code < p.Stats[j].Code })
	if p.Roles, err = s.svc.Roles(ctx, u); err != nil {
		return err
	}
	if p.Tokens, err = s.svc.ListTokens(ctx, u); err != nil {
		return err
	}
	return s.render(w, r, status, "profile", p)
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	if actor(r) == nil {
		s.toLogin(w, r)
		return nil
	}
	p := &profilePage{NewName: r.PostFormValue("name")}
	_, token, err := s.svc.CreateAPIToken(r.Context(), actor(r), p.NewName)
	if err != nil {
		if !p.Fail(err) {
			return err
		}
		return s.renderProfile(w, r, p, statusFor(err))
	}
	// The token is shown in this answer only; it is never stored in clear.
	p.NewToken, p.NewName = token, ""
	return s.renderProfile(w, r, p, http.StatusOK)
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	if actor(r) == nil {
		s.toLogin(w, r)
		return nil
	}
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.svc.RevokeToken(r.Context(), actor(r), id); err != nil {
		return err
	}
	http.Redirect(w, r, "/profile", http.StatusSeeOther)
	return nil
}

// adminPage lists users with their roles.
type adminPage struct {
	Base
	Users []*dynabench.User
	Next  int64
	After int64
}

func (s *Server) adminUsers(w http.ResponseWriter, r *http.Request) error {
	if actor(r) == nil {
		s.toLogin(w, r)
		return nil
	}
	p := &adminPage{After: int64(formInt(r, "after", 0))}
	p.Title = "Users"
	users, err := s.svc.Users(r.Context(), actor(r), p.After, 101)
	if err != nil {
		return err
	}
	if len(users) > 100 {
		users = users[:100]
		p.Next = users[99].ID
	}
	p.Users = users
	return s.render(w, r, http.StatusOK, "admin", p)
}

func (s *Server) setRole(w http.ResponseWriter, r *http.Request) error {
	if actor(r) == nil {
		s.toLogin(w, r)
		return nil
	}
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.svc.SetAdmin(r.Context(), actor(r), id, r.PostFormValue("admin") == "true"); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/users", http.StatusSeeOther)
	return nil
}
