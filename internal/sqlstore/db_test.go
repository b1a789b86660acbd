package sqlstore_test

import (
	"path/filepath"
	"testing"

	"github.com/dynabench-go/dynabench/internal/sqlstore"
)

func TestOpenMigrate(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ok, err := e.db.SchemaCurrent(ctx)
		if err != nil || !ok {
			t.Fatalf("schema current = %v, %v", ok, err)
		}
		n, err := e.db.Migrate(ctx)
		if err != nil || n != 0 {
			t.Fatalf("second migrate applied %d, %v; want 0, nil", n, err)
		}
		must(t, e.db.Ping(ctx))
	})
}

func TestOpenSQLiteOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := sqlstore.Open(ctx, "", sqlstore.Options{}); err == nil {
		t.Error("empty path opened")
	}
	if _, err := sqlstore.Open(ctx, filepath.Join(dir, "a.db"), sqlstore.Options{Synchronous: "OFF"}); err == nil {
		t.Error("synchronous=OFF accepted; only FULL and NORMAL are durable enough")
	}
	db, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "b.db")+"?ignored=1", sqlstore.Options{Synchronous: "normal"})
	must(t, err)
	defer db.Close()
	if db.Engine != sqlstore.SQLite {
		t.Fatalf("engine = %q", db.Engine)
	}
	ok, err := db.SchemaCurrent(ctx)
	if err != nil || ok {
		t.Fatalf("fresh file: schema current = %v, %v; want false", ok, err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}
