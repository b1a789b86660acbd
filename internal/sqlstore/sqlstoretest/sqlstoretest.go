// Package sqlstoretest opens fresh, migrated databases for tests: a SQLite file in a temporary
// directory always, and a private PostgreSQL schema whenever DYNABENCH_TEST_POSTGRES_URL is set
// (CI sets it). Tests loop over Engines so that one suite runs on both.
package sqlstoretest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/dynabench-go/dynabench/internal/sqlstore"
)

// EnvPostgres names the variable holding the PostgreSQL URL for tests.
const EnvPostgres = "DYNABENCH_TEST_POSTGRES_URL"

// Engines lists the engines to test on: always SQLite, PostgreSQL when configured.
func Engines() []string {
	if os.Getenv(EnvPostgres) != "" {
		return []string{sqlstore.SQLite, sqlstore.Postgres}
	}
	return []string{sqlstore.SQLite}
}

// URL returns a database URL for a fresh, empty database of the engine, removed when t ends.
// For PostgreSQL that is a new schema in the configured database, selected with search_path.
func URL(t testing.TB, engine string) string {
	t.Helper()
	switch engine {
	case sqlstore.SQLite:
		return filepath.Join(t.TempDir(), "test.db")
	case sqlstore.Postgres:
		base := os.Getenv(EnvPostgres)
		if base == "" {
			t.Skip(EnvPostgres + " not set")
		}
		b := make([]byte, 6)
		rand.Read(b)
		schema := "t_" + hex.EncodeToString(b)
		admin, err := sql.Open("pgx", base)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
			t.Fatalf("create schema: %v", err)
		}
		t.Cleanup(func() {
			db, err := sql.Open("pgx", base)
			if err != nil {
				return
			}
			defer db.Close()
			db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
		})
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	t.Fatalf("unknown engine %q", engine)
	return ""
}

// Open returns a fresh migrated database of the engine, closed when t ends.
func Open(t testing.TB, engine string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), URL(t, engine), sqlstore.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", engine, err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate %s: %v", engine, err)
	}
	return db
}
