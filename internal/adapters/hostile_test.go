package adapters_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
)

// Hostile model servers beyond TestFaultsAcrossAdapters: a server that sends its headers and then
// trickles the body past the deadline, one that streams an endless body, one that never sends a
// header at all but keeps the connection open, and the same faults on the batch path.

func trickles(t *testing.T, p protocol, w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(200)
	rc := http.NewResponseController(w)
	for range 100 {
		if _, err := w.Write([]byte(" ")); err != nil {
			return
		}
		rc.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func endless(t *testing.T, p protocol, w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(200)
	chunk := []byte("[" + strings.Repeat(`"x",`, 4096))
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

func TestHostileServers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fault   fault
		kind    string
		message string
	}{
		{"trickles its body past the deadline", trickles, dynabench.ModelTimeout, ""},
		{"streams an endless body", endless, dynabench.ModelInvalidAnswer, "answer too large"},
		{"never answers a header", hangs, dynabench.ModelTimeout, "no answer within"},
	}
	for _, p := range protocols {
		for _, tt := range tests {
			for _, batch := range []bool{false, true} {
				name := p.kind + "/" + tt.name
				if batch {
					name += "/batch"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					srv, _ := faultServer(t, p, tt.fault)
					pr := predictor(t, p, srv.URL, map[string]any{"timeout_ms": 300})
					began := time.Now()
					var err error
					if batch {
						_, err = pr.PredictBatch(context.Background(), []map[string]any{pairInput, pairInput, pairInput})
					} else {
						_, err = pr.Predict(context.Background(), pairInput)
					}
					took := time.Since(began)
					var me *dynabench.ModelError
					if !errors.As(err, &me) || me.Kind != tt.kind || !strings.Contains(err.Error(), tt.message) {
						t.Fatalf("error %v, want %s with %q", err, tt.kind, tt.message)
					}
					if took > 3*time.Second {
						t.Errorf("took %s with a 300 ms deadline", took)
					}
				})
			}
		}
	}
}
