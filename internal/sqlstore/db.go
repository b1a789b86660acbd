// Package sqlstore implements dynabench.Store on SQLite (modernc.org/sqlite, pure Go) and PostgreSQL
// (pgx) with one body of SQL: both engines accept $n placeholders, ON CONFLICT and RETURNING, so the
// queries are shared and only the DDL (migrations/<engine>) and a few fragments differ.
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations
var migrations embed.FS

// Engine names.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// DB is an open database: a write pool and a read pool (the same pool on PostgreSQL).
type DB struct {
	Engine    string
	write     *sql.DB
	read      *sql.DB
	committer *committer // SQLite only: runs waiting write transactions together
	// Now is the clock; tests replace it.
	Now func() time.Time
}

// Options tune Open.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: FULL (default) makes every acknowledged commit
	// survive a power loss as well as a process crash; NORMAL survives process crashes only.
	Synchronous string
	// MaxConns caps the PostgreSQL pool and the SQLite read pool (default 16).
	MaxConns int
}

// Open connects to url: a postgres:// or postgresql:// URL, or else a SQLite file path (an optional
// "sqlite:" or "file:" prefix is allowed). It does not migrate; call Migrate.
func Open(ctx context.Context, rawURL string, opt Options) (*DB, error) {
	if opt.MaxConns <= 0 {
		opt.MaxConns = 16
	}
	db := &DB{Now: time.Now}
	var err error
	if strings.HasPrefix(rawURL, "postgres://") || strings.HasPrefix(rawURL, "postgresql://") {
		db.Engine = Postgres
		db.write, err = sql.Open("pgx", rawURL)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: open postgres: %w", err)
		}
		db.write.SetMaxOpenConns(opt.MaxConns)
		db.write.SetMaxIdleConns(opt.MaxConns)
		db.write.SetConnMaxIdleTime(5 * time.Minute)
		db.read = db.write
	} else {
		db.Engine = SQLite
		if err := db.openSQLite(rawURL, opt); err != nil {
			return nil, err
		}
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.write.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlstore: connect %s: %w", db.Engine, err)
	}
	return db, nil
}

// openSQLite opens one writer connection and a pool of readers on the same file. Writes are
// serialised in-process by the single writer rather than failing with SQLITE_BUSY; WAL lets the
// readers go on while it writes. busy_timeout comes first so that the WAL switch itself waits.
func (db *DB) openSQLite(raw string, opt Options) error {
	path := strings.TrimPrefix(strings.TrimPrefix(raw, "sqlite:"), "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if path == "" {
		return errors.New("sqlstore: empty SQLite path")
	}
	sync := strings.ToUpper(opt.Synchronous)
	if sync == "" {
		sync = "FULL"
	}
	if sync != "FULL" && sync != "NORMAL" {
		return fmt.Errorf("sqlstore: synchronous must be FULL or NORMAL, not %q", opt.Synchronous)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+sync+")")
	// The writer begins IMMEDIATE: another process writing the same file (a CLI command next to
	// serve) then waits on busy_timeout at BEGIN instead of failing mid-transaction.
	wq := url.Values{}
	for k, v := range q {
		wq[k] = v
	}
	wq.Set("_txlock", "immediate")
	if db.write, err = sql.Open("sqlite", "file:"+abs+"?"+wq.Encode()); err != nil {
		return fmt.Errorf("sqlstore: open sqlite: %w", err)
	}
	db.write.SetMaxOpenConns(1)
	db.write.SetMaxIdleConns(1)
	db.write.SetConnMaxLifetime(0)
	q.Add("_pragma", "query_only(1)")
	if db.read, err = sql.Open("sqlite", "file:"+abs+"?"+q.Encode()); err != nil {
		db.write.Close()
		return fmt.Errorf("sqlstore: open sqlite: %w", err)
	}
	db.read.SetMaxOpenConns(opt.MaxConns)
	db.read.SetMaxIdleConns(opt.MaxConns)
	db.committer = newCommitter(db.write)
	return nil
}

// Close closes both pools.
func (db *DB) Close() error {
	if db.committer != nil {
		db.committer.close()
	}
	err := db.write.Close()
	if db.read != db.write {
		if rerr := db.read.Close(); err == nil {
			err = rerr
		}
	}
	return err
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.read.PingContext(ctx); err != nil {
		return err
	}
	return db.write.PingContext(ctx)
}

func (db *DB) provider() (*goose.Provider, error) {
	dir, err := fs.Sub(migrations, "migrations/"+db.Engine)
	if err != nil {
		return nil, err
	}
	dialect := goose.DialectSQLite3
	if db.Engine == Postgres {
		dialect = goose.DialectPostgres
	}
	return goose.NewProvider(dialect, db.write, dir)
}

// Migrate applies every pending migration and returns how many it applied.
func (db *DB) Migrate(ctx context.Context) (int, error) {
	p, err := db.provider()
	if err != nil {
		return 0, fmt.Errorf("sqlstore: migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return len(res), fmt.Errorf("sqlstore: migrate: %w", err)
	}
	return len(res), nil
}

// SchemaCurrent reports whether every migration has been applied.
func (db *DB) SchemaCurrent(ctx context.Context) (bool, error) {
	p, err := db.provider()
	if err != nil {
		return false, err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return false, err
	}
	return !pending, nil
}
