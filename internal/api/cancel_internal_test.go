package api

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
)

// TestClientHangUpIsNotAnInternalError: a client that disconnects cancels its request's context,
// and the store fails with context.Canceled. Found by e2e TestPostgresRestartUnderLoad, where every
// request in flight when the load stopped was logged as an "internal error" 500.
func TestClientHangUpIsNotAnInternalError(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := toHTTPError(ctx, log, fmt.Errorf("sqlstore: round: %w", context.Canceled))
	if eb, ok := err.(*ErrorBody); !ok || eb.status != StatusClientClosed || eb.Err.Code != "client_closed" {
		t.Errorf("toHTTPError = %#v, want a 499 client_closed", err)
	}
	if logs.Len() != 0 {
		t.Errorf("logged %q", logs.String())
	}
	// A cancelled error while the request itself is live is still an internal error.
	if eb := toHTTPError(context.Background(), log, context.Canceled).(*ErrorBody); eb.status != 500 {
		t.Errorf("status %d, want 500", eb.status)
	}
}
