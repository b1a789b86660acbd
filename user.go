package dynabench

import (
	"context"
	"time"
)

// User is an account. Roles: Admin is global; task ownership is per task (TaskOwner rows).
type User struct {
	ID           int64
	Username     string
	Email        string
	PasswordHash string // argon2id, PHC string format
	Admin        bool
	CreatedAt    time.Time
}

// Token is an opaque bearer credential. Only its SHA-256 hash is stored.
type Token struct {
	ID         int64
	UserID     int64
	Name       string
	Kind       string // "api" or "session"
	Hash       []byte
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
}

type userKey struct{}

// NewContextWithUser returns ctx carrying the authenticated user.
func NewContextWithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFromContext returns the authenticated user, or nil for an anonymous caller.
func UserFromContext(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}
