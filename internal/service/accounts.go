package service

import (
	"context"
	"net/mail"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/secret"
)

var usernameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{2,31}$`)

// Register creates an account and a session token for it.
func (s *Service) Register(ctx context.Context, username, email, password string) (*dynabench.User, string, error) {
	u, err := s.createAccount(ctx, username, email, password, false)
	if err != nil {
		return nil, "", err
	}
	token, err := s.issueToken(ctx, u, "session", "login")
	return u, token, err
}

// CreateUser is the operator's path (CLI, first start): no session token, optional admin role.
func (s *Service) CreateUser(ctx context.Context, username, email, password string, admin bool) (*dynabench.User, error) {
	return s.createAccount(ctx, username, email, password, admin)
}

func (s *Service) createAccount(ctx context.Context, username, email, password string, admin bool) (*dynabench.User, error) {
	var problems []dynabench.FieldError
	if !usernameRE.MatchString(username) {
		problems = append(problems, dynabench.FieldError{Field: "username",
			Message: "3 to 32 letters, digits, '_', '.' or '-', starting with a letter or digit"})
	}
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > 254 {
		problems = append(problems, dynabench.FieldError{Field: "email", Message: "not a valid email address"})
	}
	if n := utf8.RuneCountInString(password); n < 8 || len(password) > 1024 || !utf8.ValidString(password) {
		problems = append(problems, dynabench.FieldError{Field: "password", Message: "8 to 1024 characters"})
	}
	if len(problems) > 0 {
		return nil, dynabench.Invalid(problems)
	}
	hash, err := secret.HashPassword(password, s.PasswordParams)
	if err != nil {
		return nil, err
	}
	u := &dynabench.User{Username: username, Email: strings.ToLower(email), PasswordHash: hash, Admin: admin}
	if err := s.Store.CreateUser(ctx, u); err != nil {
		if dynabench.IsCode(err, dynabench.ECONFLICT) {
			return nil, dynabench.Errorf(dynabench.ECONFLICT, "that username or email is already registered")
		}
		return nil, err
	}
	return u, nil
}

// Login checks the credentials and issues a session token. Unknown users and wrong passwords get the
// same error, after the same amount of work.
func (s *Service) Login(ctx context.Context, username, password string) (*dynabench.User, string, error) {
	bad := dynabench.Errorf(dynabench.EUNAUTHORIZED, "wrong username or password")
	u, err := s.Store.FindUserByUsername(ctx, username)
	if dynabench.IsCode(err, dynabench.ENOTFOUND) {
		s.verifyDummy(password)
		return nil, "", bad
	} else if err != nil {
		return nil, "", err
	}
	if err := secret.VerifyPassword(password, u.PasswordHash); err != nil {
		return nil, "", bad
	}
	token, err := s.issueToken(ctx, u, "session", "login")
	return u, token, err
}

func (s *Service) verifyDummy(password string) {
	s.mu.Lock()
	if s.dummyHash == "" {
		s.dummyHash, _ = secret.HashPassword("dummy password for timing", s.PasswordParams)
	}
	h := s.dummyHash
	s.mu.Unlock()
	_ = secret.VerifyPassword(password, h)
}

func (s *Service) issueToken(ctx context.Context, u *dynabench.User, kind, name string) (string, error) {
	token, hash, err := secret.NewToken()
	if err != nil {
		return "", err
	}
	t := &dynabench.Token{UserID: u.ID, Name: name, Kind: kind, Hash: hash}
	if kind == "session" {
		exp := s.Now().Add(s.SessionTTL)
		t.ExpiresAt = &exp
	}
	if err := s.Store.CreateToken(ctx, t); err != nil {
		return "", err
	}
	return token, nil
}

// Authenticate returns the user a bearer token belongs to; EUNAUTHORIZED for unknown or expired tokens.
func (s *Service) Authenticate(ctx context.Context, token string) (*dynabench.User, error) {
	bad := dynabench.Errorf(dynabench.EUNAUTHORIZED, "invalid or expired token")
	if !strings.HasPrefix(token, secret.TokenPrefix) || len(token) > 200 {
		return nil, bad
	}
	t, u, err := s.Store.FindTokenUser(ctx, secret.HashToken(token))
	if dynabench.IsCode(err, dynabench.ENOTFOUND) {
		return nil, bad
	} else if err != nil {
		return nil, err
	}
	if t.ExpiresAt != nil && !s.Now().Before(*t.ExpiresAt) {
		return nil, bad
	}
	return u, nil
}

// CreateAPIToken issues a named, non-expiring API token for the actor; the token is returned once.
func (s *Service) CreateAPIToken(ctx context.Context, actor *dynabench.User, name string) (*dynabench.Token, string, error) {
	if err := requireUser(actor); err != nil {
		return nil, "", err
	}
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 100 {
		return nil, "", dynabench.FieldErrorf(dynabench.EINVALID, "name", "1 to 100 characters")
	}
	token, hash, err := secret.NewToken()
	if err != nil {
		return nil, "", err
	}
	t := &dynabench.Token{UserID: actor.ID, Name: name, Kind: "api", Hash: hash}
	if err := s.Store.CreateToken(ctx, t); err != nil {
		return nil, "", err
	}
	return t, token, nil
}

// ListTokens lists the actor's tokens (never their values).
func (s *Service) ListTokens(ctx context.Context, actor *dynabench.User) ([]*dynabench.Token, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	return s.Store.FindTokens(ctx, actor.ID)
}

// RevokeToken deletes one of the actor's tokens; another user's token id is ENOTFOUND, never a hint.
func (s *Service) RevokeToken(ctx context.Context, actor *dynabench.User, id int64) error {
	if err := requireUser(actor); err != nil {
		return err
	}
	return s.Store.DeleteToken(ctx, actor.ID, id)
}

// Me returns the actor with their stats per task.
func (s *Service) Me(ctx context.Context, actor *dynabench.User) (map[string]dynabench.AnnotatorStats, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	return s.Store.UserStats(ctx, actor.ID)
}

// SetAdmin grants or revokes the admin role (admins only; an admin cannot demote themselves).
func (s *Service) SetAdmin(ctx context.Context, actor *dynabench.User, userID int64, admin bool) error {
	if err := requireUser(actor); err != nil {
		return err
	}
	if !actor.Admin {
		return dynabench.Errorf(dynabench.EFORBIDDEN, "only admins can change roles")
	}
	if actor.ID == userID && !admin {
		return dynabench.Errorf(dynabench.EINVALID, "you cannot remove your own admin role")
	}
	return s.Store.SetUserAdmin(ctx, userID, admin)
}

// Roles lists the actor's roles: "admin" and "owner:<task code>" for each owned task.
func (s *Service) Roles(ctx context.Context, actor *dynabench.User) ([]string, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	roles := []string{"user"}
	if actor.Admin {
		roles = append(roles, "admin")
	}
	tasks, err := s.Store.FindTasks(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		if ok, err := s.Store.IsTaskOwner(ctx, t.ID, actor.ID); err != nil {
			return nil, err
		} else if ok {
			roles = append(roles, "owner:"+t.Code)
		}
	}
	return roles, nil
}

// Users lists accounts after the cursor (admins only).
func (s *Service) Users(ctx context.Context, actor *dynabench.User, after int64, limit int) ([]*dynabench.User, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	if !actor.Admin {
		return nil, dynabench.Errorf(dynabench.EFORBIDDEN, "only admins can list users")
	}
	return s.Store.FindUsers(ctx, after, limit)
}
