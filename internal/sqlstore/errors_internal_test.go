package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
)

// TestUnreachablePostgres: a database that cannot be reached is EUNAVAILABLE (503), not internal.
// Port 1 on localhost refuses connections, so no server is needed.
func TestUnreachablePostgres(t *testing.T) {
	t.Parallel()
	pool, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:1/x?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := NewStore(&DB{Engine: Postgres, write: pool, read: pool, Now: time.Now})
	ctx := context.Background()
	if _, err := s.FindUserByID(ctx, 1); !dynabench.IsCode(err, dynabench.EUNAVAILABLE) {
		t.Errorf("read: %v, want unavailable", err)
	}
	if err := s.InTx(ctx, func(dynabench.Store) error { return nil }); !dynabench.IsCode(err, dynabench.EUNAVAILABLE) {
		t.Errorf("begin: %v, want unavailable", err)
	}
}

func TestMapErr(t *testing.T) {
	t.Parallel()
	domain := dynabench.Errorf(dynabench.ERATELIMIT, "slow down")
	other := errors.New("disk on fire")
	for _, c := range []struct {
		err  error
		code string
	}{
		{nil, ""},
		{sql.ErrNoRows, dynabench.ENOTFOUND},
		{domain, dynabench.ERATELIMIT},
		{other, dynabench.EINTERNAL},
	} {
		got := mapErr("op", c.err)
		if dynabench.ErrorCode(got) != c.code {
			t.Errorf("mapErr(%v) = %v, want code %q", c.err, got, c.code)
		}
	}
	if got := mapErr("op", other); !errors.Is(got, other) {
		t.Errorf("internal error %v does not wrap the cause", got)
	}
	if got := mapErr("op", domain); got != error(domain) {
		t.Errorf("domain error rewrapped: %v", got)
	}
}
