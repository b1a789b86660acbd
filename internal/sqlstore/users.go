package sqlstore

import (
	"context"
	"database/sql"

	"github.com/dynabench-go/dynabench"
)

const userCols = `id, username, email, password_hash, admin, created_at`

func scanUser(row interface{ Scan(...any) error }) (*dynabench.User, error) {
	var u dynabench.User
	var created int64
	if err := row.Scan(&u.ID, &u.Username, &u.Email, &u.PasswordHash, &u.Admin, &created); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMillis(created)
	return &u, nil
}

// CreateUser inserts u and sets its ID and CreatedAt; ECONFLICT on a taken username or email.
func (s *Store) CreateUser(ctx context.Context, u *dynabench.User) error {
	now := s.now()
	err := s.w().QueryRowContext(ctx,
		`INSERT INTO users (username, email, password_hash, admin, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		u.Username, u.Email, u.PasswordHash, u.Admin, now).Scan(&u.ID)
	if err != nil {
		return mapErr("create user", err)
	}
	u.CreatedAt = fromMillis(now)
	return nil
}

// FindUserByID returns the user or ENOTFOUND.
func (s *Store) FindUserByID(ctx context.Context, id int64) (*dynabench.User, error) {
	u, err := scanUser(s.r().QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE id = $1`, id))
	return u, mapErr("user", err)
}

// FindUserByUsername looks the username up case-insensitively.
func (s *Store) FindUserByUsername(ctx context.Context, username string) (*dynabench.User, error) {
	u, err := scanUser(s.r().QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE lower(username) = lower($1)`, username))
	return u, mapErr("user", err)
}

// FindUsers lists users by id after the cursor.
func (s *Store) FindUsers(ctx context.Context, after int64, limit int) ([]*dynabench.User, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+userCols+` FROM users WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, mapErr("users", err)
	}
	defer rows.Close()
	var out []*dynabench.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, mapErr("users", err)
		}
		out = append(out, u)
	}
	return out, mapErr("users", rows.Err())
}

// SetUserAdmin grants or revokes the admin role.
func (s *Store) SetUserAdmin(ctx context.Context, id int64, admin bool) error {
	res, err := s.w().ExecContext(ctx, `UPDATE users SET admin = $1 WHERE id = $2`, admin, id)
	return expectOne(res, err, "user")
}

// CountUsers counts accounts.
func (s *Store) CountUsers(ctx context.Context) (int64, error) {
	var n int64
	err := s.r().QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, mapErr("count users", err)
}

const tokenCols = `id, user_id, name, kind, hash, created_at, expires_at, last_used_at`

func scanToken(row interface{ Scan(...any) error }) (*dynabench.Token, error) {
	var t dynabench.Token
	var created int64
	var expires, used sql.NullInt64
	if err := row.Scan(&t.ID, &t.UserID, &t.Name, &t.Kind, &t.Hash, &created, &expires, &used); err != nil {
		return nil, err
	}
	t.CreatedAt, t.ExpiresAt, t.LastUsedAt = fromMillis(created), fromNullMillis(expires), fromNullMillis(used)
	return &t, nil
}

// CreateToken stores a token's hash.
func (s *Store) CreateToken(ctx context.Context, t *dynabench.Token) error {
	now := s.now()
	err := s.w().QueryRowContext(ctx,
		`INSERT INTO tokens (user_id, name, kind, hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		t.UserID, t.Name, t.Kind, t.Hash, now, nullMillis(t.ExpiresAt)).Scan(&t.ID)
	if err != nil {
		return mapErr("create token", err)
	}
	t.CreatedAt = fromMillis(now)
	return nil
}

// FindTokenUser finds a token and its user in one query.
func (s *Store) FindTokenUser(ctx context.Context, hash []byte) (*dynabench.Token, *dynabench.User, error) {
	var t dynabench.Token
	var u dynabench.User
	var tCreated, uCreated int64
	var expires, used sql.NullInt64
	err := s.r().QueryRowContext(ctx, `SELECT t.id, t.user_id, t.name, t.kind, t.hash, t.created_at, t.expires_at,
		t.last_used_at, u.id, u.username, u.email, u.password_hash, u.admin, u.created_at
		FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = $1`, hash).Scan(
		&t.ID, &t.UserID, &t.Name, &t.Kind, &t.Hash, &tCreated, &expires, &used,
		&u.ID, &u.Username, &u.Email, &u.PasswordHash, &u.Admin, &uCreated)
	if err != nil {
		return nil, nil, mapErr("token", err)
	}
	t.CreatedAt, t.ExpiresAt, t.LastUsedAt = fromMillis(tCreated), fromNullMillis(expires), fromNullMillis(used)
	u.CreatedAt = fromMillis(uCreated)
	return &t, &u, nil
}

// FindTokens lists a user's tokens, newest first.
func (s *Store) FindTokens(ctx context.Context, userID int64) ([]*dynabench.Token, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE user_id = $1 ORDER BY id DESC`, userID)
	if err != nil {
		return nil, mapErr("tokens", err)
	}
	defer rows.Close()
	var out []*dynabench.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, mapErr("tokens", err)
		}
		out = append(out, t)
	}
	return out, mapErr("tokens", rows.Err())
}

// DeleteToken revokes one of the user's tokens.
func (s *Store) DeleteToken(ctx context.Context, userID, tokenID int64) error {
	res, err := s.w().ExecContext(ctx, `DELETE FROM tokens WHERE id = $1 AND user_id = $2`, tokenID, userID)
	return expectOne(res, err, "token")
}
