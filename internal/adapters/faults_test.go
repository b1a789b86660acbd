package adapters_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters"
)

// Every adapter meets the same faults through the shared HTTP layer, and reads its own protocol's
// wrong answers as invalid answers. Each kind below says how its protocol answers the label
// "neutral", and an answer of the wrong shape.

var nliSpec = adapters.Spec{Kind: adapters.KindClassification, Labels: []string{"entailed", "neutral", "contradictory"},
	LabelField: "label", ProbField: "prob", TextFields: []string{"context", "hypothesis"}}

type protocol struct {
	kind    string
	opts    map[string]any
	answer  func(label string) string // a valid-looking answer naming label
	badJSON string                    // a well-formed answer of the wrong shape
}

var protocols = []protocol{
	{kind: "dynalab", answer: func(l string) string { return fmt.Sprintf(`{"label": %q}`, l) }, badJSON: `[1, 2]`},
	{kind: "openai", opts: map[string]any{"model": "m"}, answer: func(l string) string {
		return fmt.Sprintf(`{"choices": [{"message": {"role": "assistant", "content": %q}}]}`, l)
	}, badJSON: `{"choices": "none"}`},
	{kind: "hf", answer: func(l string) string { return fmt.Sprintf(`[{"label": %q, "score": 0.9}]`, l) }, badJSON: `[[1]]`},
	{kind: "kserve", opts: map[string]any{"model_name": "m", "output_label": "label"}, answer: func(l string) string {
		return fmt.Sprintf(`{"outputs": [{"name": "label", "shape": [1], "datatype": "BYTES", "data": [%q]}]}`, l)
	}, badJSON: `{"outputs": [{"name": "label", "shape": [2], "datatype": "BYTES", "data": ["neutral", "neutral"]}]}`},
}

// fault is how the server answers one request.
type fault func(t *testing.T, p protocol, w http.ResponseWriter, r *http.Request)

func answer(label string) fault {
	return func(t *testing.T, p protocol, w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, p.answer(label))
	}
}

func status(code int, retryAfter string) fault {
	return func(t *testing.T, p protocol, w http.ResponseWriter, r *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		http.Error(w, `{"error": "nope"}`, code)
	}
}

func body(s string) fault {
	return func(t *testing.T, p protocol, w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, s) }
}

func badShape(t *testing.T, p protocol, w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, p.badJSON)
}

func hangs(t *testing.T, p protocol, w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-t.Context().Done():
	}
}

func resetsMidAnswer(t *testing.T, p protocol, w http.ResponseWriter, r *http.Request) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n" + p.answer("neutral")[:5])
	_ = buf.Flush()
	conn.Close()
}

func resetsAtOnce(t *testing.T, p protocol, w http.ResponseWriter, r *http.Request) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
	}
}

func huge(t *testing.T, p protocol, w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, strings.Repeat(" ", 64<<10)+p.answer("neutral"))
}

// faultServer answers the i-th request with faults[i], and the last fault from then on.
func faultServer(t *testing.T, p protocol, faults ...fault) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(hits.Add(1)) - 1
		faults[min(i, len(faults)-1)](t, p, w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func predictor(t *testing.T, p protocol, url string, extra map[string]any) dynabench.Predictor {
	t.Helper()
	opts := map[string]any{"timeout_ms": 2000}
	for k, v := range p.opts {
		opts[k] = v
	}
	for k, v := range extra {
		opts[k] = v
	}
	reg := adapters.DefaultRegistry(adapters.Options{BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond, MaxBodyBytes: 16 << 10})
	pr, err := reg.New(context.Background(), &dynabench.Model{ID: 1, Kind: p.kind, URL: url, Options: opts}, nliSpec)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

var pairInput = map[string]any{"context": "A man plays a guitar.", "hypothesis": "Someone makes music."}

func TestFaultsAcrossAdapters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		faults  []fault
		extra   map[string]any
		kind    string // "" for success
		hits    int64
		message string
	}{
		{name: "answers", faults: []fault{answer("neutral")}, hits: 1},
		{name: "hangs", faults: []fault{hangs}, extra: map[string]any{"timeout_ms": 150}, kind: dynabench.ModelTimeout, hits: 1, message: "no answer within"},
		{name: "resets before answering, then answers", faults: []fault{resetsAtOnce, answer("neutral")}, hits: 2},
		{name: "resets mid-answer", faults: []fault{resetsMidAnswer, answer("neutral")}, kind: dynabench.ModelUnreachable, hits: 1, message: "connection lost"},
		{name: "500", faults: []fault{status(500, ""), answer("neutral")}, kind: dynabench.ModelBadStatus, hits: 1, message: "HTTP 500"},
		{name: "503 then answers", faults: []fault{status(503, ""), answer("neutral")}, hits: 2},
		{name: "503 always", faults: []fault{status(503, "")}, kind: dynabench.ModelBadStatus, hits: 3, message: "HTTP 503"},
		{name: "429 with Retry-After then answers", faults: []fault{status(429, "0"), answer("neutral")}, hits: 2},
		{name: "401", faults: []fault{status(401, ""), answer("neutral")}, kind: dynabench.ModelBadStatus, hits: 1, message: "HTTP 401"},
		{name: "huge answer", faults: []fault{huge}, kind: dynabench.ModelInvalidAnswer, hits: 1, message: "answer too large"},
		{name: "malformed JSON", faults: []fault{body(`{"label": "neu`)}, kind: dynabench.ModelInvalidAnswer, hits: 1},
		{name: "wrong shape", faults: []fault{badShape}, kind: dynabench.ModelInvalidAnswer, hits: 1},
		{name: "label outside the set", faults: []fault{answer("maybe")}, kind: dynabench.ModelInvalidAnswer, hits: 1, message: `"maybe"`},
	}
	for _, p := range protocols {
		for _, tt := range tests {
			t.Run(p.kind+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv, hits := faultServer(t, p, tt.faults...)
				pr := predictor(t, p, srv.URL, tt.extra)
				out, err := pr.Predict(context.Background(), pairInput)
				if got := hits.Load(); got != tt.hits {
					t.Errorf("%d requests, want %d", got, tt.hits)
				}
				if tt.kind == "" {
					if err != nil || out["label"] != "neutral" {
						t.Fatalf("Predict = %v, %v", out, err)
					}
					return
				}
				var me *dynabench.ModelError
				if !errors.As(err, &me) || me.Kind != tt.kind || !strings.Contains(err.Error(), tt.message) {
					t.Fatalf("error %v, want %s with %q", err, tt.kind, tt.message)
				}
				h, ok := adapters.HealthOf(pr)
				if !ok || h.Failures != 1 || h.LastError == "" {
					t.Errorf("health %+v", h)
				}
			})
		}
		t.Run(p.kind+"/server down", func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			url := "http://" + ln.Addr().String()
			ln.Close()
			_, err = predictor(t, p, url, nil).Predict(context.Background(), pairInput)
			var me *dynabench.ModelError
			if !errors.As(err, &me) || me.Kind != dynabench.ModelUnreachable {
				t.Fatalf("error %v, want unreachable", err)
			}
		})
		t.Run(p.kind+"/breaker", func(t *testing.T) {
			t.Parallel()
			srv, hits := faultServer(t, p, status(500, ""))
			pr := predictor(t, p, srv.URL, map[string]any{"breaker_failures": 2})
			for range 5 {
				_, _ = pr.Predict(context.Background(), pairInput)
			}
			h, _ := adapters.HealthOf(pr)
			if hits.Load() != 2 || h.Breaker != adapters.BreakerState("open") || h.ShortCircuits != 3 {
				t.Errorf("hits %d, health %+v: the open circuit must keep calls from the model", hits.Load(), h)
			}
		})
	}
}

func TestCacheKeepsOnePredictorPerModel(t *testing.T) {
	t.Parallel()
	p := protocols[0]
	srv, _ := faultServer(t, p, answer("neutral"))
	c := adapters.NewCache(adapters.DefaultRegistry(adapters.Options{}))
	m := &dynabench.Model{ID: 9, Kind: "dynalab", URL: srv.URL, Options: map[string]any{"timeout_ms": 1000}}
	p1, err := c.Predictor(context.Background(), m, nliSpec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p1.Predict(context.Background(), pairInput); err != nil {
		t.Fatal(err)
	}
	p2, _ := c.Predictor(context.Background(), &dynabench.Model{ID: 9, Kind: "dynalab", URL: srv.URL, Options: map[string]any{"timeout_ms": 1000.0}}, nliSpec)
	if p1 != p2 {
		t.Error("the same model must get the same predictor (its breaker and slots live in it)")
	}
	if h, ok := c.Health(9); !ok || h.Calls != 1 {
		t.Errorf("health %+v, %v", h, ok)
	}
	m.Options = map[string]any{"timeout_ms": 2000}
	if p3, _ := c.Predictor(context.Background(), m, nliSpec); p3 == p1 {
		t.Error("changed options must rebuild the predictor")
	}
	if _, err := c.Predictor(context.Background(), &dynabench.Model{ID: 10, Kind: "dynalab"}, nliSpec); err == nil {
		t.Error("a model without URL must fail")
	}
	if _, ok := c.Health(10); ok {
		t.Error("a failed build must not be kept")
	}
	c.Forget(9)
	if _, ok := c.Health(9); ok {
		t.Error("Forget")
	}
}
