package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// queryer is what *sql.DB and *sql.Tx have in common.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Store implements dynabench.Store. The zero transaction means autocommit; inside InTx every
// method, reads included, runs on the transaction.
type Store struct {
	db *DB
	tx queryer // the transaction (a *sql.Tx, or SQLite's batch connection); nil outside InTx
}

var _ dynabench.Store = (*Store)(nil)

// NewStore returns the store over db.
func NewStore(db *DB) *Store { return &Store{db: db} }

// DB returns the underlying database.
func (s *Store) DB() *DB { return s.db }

func (s *Store) r() queryer {
	if s.tx != nil {
		return s.tx
	}
	return s.db.read
}

func (s *Store) w() queryer {
	if s.tx != nil {
		return s.tx
	}
	return s.db.write
}

func (s *Store) now() int64 { return s.db.Now().UnixMilli() }

// InTx runs fn in a transaction on the writer. Nested calls join the outer transaction. On SQLite
// it goes through the group committer (groupcommit.go); fn's error, or a panic in it, undoes fn's
// writes only.
func (s *Store) InTx(ctx context.Context, fn func(tx dynabench.Store) error) error {
	if s.tx != nil {
		return fn(s)
	}
	if s.db.committer != nil {
		return s.db.committer.run(ctx, func(q queryer) error { return fn(&Store{db: s.db, tx: q}) })
	}
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return mapErr("begin", err)
	}
	// Deferred so that a panic in fn (recovered further up, e.g. by net/http) still ends the
	// transaction: otherwise it holds its locks and, on SQLite, the only writer connection forever.
	// After Commit it is a no-op.
	defer tx.Rollback()
	if err := fn(&Store{db: s.db, tx: tx}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return mapErr("commit", err)
	}
	return nil
}

// forUpdate is the row-lock suffix: PostgreSQL locks the row; SQLite's single writer already
// serialises every write transaction, so it needs none.
func (s *Store) forUpdate() string {
	if s.db.Engine == Postgres && s.tx != nil {
		return " FOR UPDATE"
	}
	return ""
}

// mapErr turns driver errors into domain errors by driver error code, never by message text.
func mapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var de *dynabench.Error
	if errors.As(err, &de) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return &dynabench.Error{Code: dynabench.ENOTFOUND, Message: op + ": not found"}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return &dynabench.Error{Code: dynabench.ECONFLICT, Message: "already exists"}
		case "23503":
			return &dynabench.Error{Code: dynabench.ENOTFOUND, Message: "a referenced row does not exist"}
		case "57P01", "57P02", "57P03", "53300": // shutting down, crash, cannot connect now, too many connections
			return &dynabench.Error{Code: dynabench.EUNAVAILABLE, Message: "the database is unavailable"}
		}
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		switch sqErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return &dynabench.Error{Code: dynabench.ECONFLICT, Message: "already exists"}
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return &dynabench.Error{Code: dynabench.ENOTFOUND, Message: "a referenced row does not exist"}
		case sqlite3.SQLITE_FULL:
			return &dynabench.Error{Code: dynabench.EUNAVAILABLE, Message: "the database disk is full"}
		case sqlite3.SQLITE_READONLY:
			return &dynabench.Error{Code: dynabench.EUNAVAILABLE, Message: "the database is read-only"}
		}
		// The extended codes of a primary one (778 is SQLITE_IOERR_WRITE: the file refused a write).
		switch sqErr.Code() & 0xff {
		case sqlite3.SQLITE_IOERR:
			return &dynabench.Error{Code: dynabench.EUNAVAILABLE, Message: "the database file cannot be written or read (I/O error)"}
		case sqlite3.SQLITE_READONLY:
			return &dynabench.Error{Code: dynabench.EUNAVAILABLE, Message: "the database is read-only"}
		case sqlite3.SQLITE_FULL:
			return &dynabench.Error{Code: dynabench.EUNAVAILABLE, Message: "the database disk is full"}
		}
	}
	var netErr net.Error
	var connErr *pgconn.ConnectError
	// A connection that died mid-query (the server was stopped or crashed) ends in ErrConnClosed or
	// an unexpected EOF: the database is unavailable, not our bug.
	if errors.Is(err, driver.ErrBadConn) || errors.As(err, &netErr) || errors.As(err, &connErr) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &dynabench.Error{Code: dynabench.EUNAVAILABLE, Message: "the database is unavailable"}
	}
	return fmt.Errorf("sqlstore: %s: %w", op, err)
}

// encodeJSON renders a map for a JSON column; nil becomes {}.
func encodeJSON(v any) (string, error) {
	if m, ok := v.(map[string]any); ok && m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("sqlstore: encode json: %w", err)
	}
	return string(b), nil
}

// decodeMap reads a JSON object column.
func decodeMap(b []byte) (map[string]any, error) {
	m := map[string]any{}
	if len(b) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("sqlstore: decode json: %w", err)
	}
	return m, nil
}

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func fromNullMillis(ms sql.NullInt64) *time.Time {
	if !ms.Valid {
		return nil
	}
	t := fromMillis(ms.Int64)
	return &t
}

func nullMillis(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

func notFound(what string) error {
	return &dynabench.Error{Code: dynabench.ENOTFOUND, Message: what + " not found"}
}

// expectOne turns "no row changed" into ENOTFOUND.
func expectOne(res sql.Result, err error, what string) error {
	if err != nil {
		return mapErr(what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return mapErr(what, err)
	}
	if n == 0 {
		return notFound(what)
	}
	return nil
}
