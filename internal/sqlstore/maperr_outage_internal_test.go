package sqlstore

import (
	"fmt"
	"io"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestMapErrConnectionDied: when PostgreSQL stops under load, the queries in flight fail with a
// closed connection or an unexpected EOF. Found by e2e TestPostgresRestartUnderLoad, where they were
// answered 500 "internal error" instead of 503 "unavailable".
func TestMapErrConnectionDied(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		pgconn.ErrConnClosed,
		fmt.Errorf("commit: %w", pgconn.ErrConnClosed),
		io.ErrUnexpectedEOF,
		fmt.Errorf("read: %w", io.ErrUnexpectedEOF),
	} {
		if got := mapErr("op", err); !dynabench.IsCode(got, dynabench.EUNAVAILABLE) {
			t.Errorf("mapErr(%v) = %v, want unavailable", err, got)
		}
	}
}
