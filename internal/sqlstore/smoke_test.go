package sqlstore_test

import (
	"context"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
	"github.com/dynabench-go/dynabench/internal/sqlstore/sqlstoretest"
)

func TestOpenMigrate(t *testing.T) {
	for _, engine := range sqlstoretest.Engines() {
		t.Run(engine, func(t *testing.T) {
			db := sqlstoretest.Open(t, engine)
			ok, err := db.SchemaCurrent(context.Background())
			if err != nil || !ok {
				t.Fatalf("schema current = %v, %v", ok, err)
			}
			s := sqlstore.NewStore(db)
			u := &dynabench.User{Username: "a", Email: "a@x", PasswordHash: "h"}
			if err := s.CreateUser(context.Background(), u); err != nil {
				t.Fatal(err)
			}
			if err := s.CreateUser(context.Background(), &dynabench.User{Username: "A", Email: "b@x", PasswordHash: "h"}); !dynabench.IsCode(err, dynabench.ECONFLICT) {
				t.Fatalf("duplicate username (other case): got %v, want conflict", err)
			}
		})
	}
}
