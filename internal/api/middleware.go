package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/ratelimit"
)

type requestIDKey struct{}

type clientKey struct{}

// client returns the caller's address as rate limits see it.
func client(ctx context.Context) string {
	c, _ := ctx.Value(clientKey{}).(string)
	return c
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// authenticate resolves a bearer token to the acting user. A request with a bad token is refused
// outright, even on public routes, so a client never mistakes itself for logged in.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		if h == "" {
			next.ServeHTTP(w, r)
			return
		}
		// The scheme name is case-insensitive (RFC 9110 §11.1): "bearer x" is as good as "Bearer x".
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			writeError(w, http.StatusUnauthorized, dynabench.EUNAUTHORIZED, "Authorization", "use 'Authorization: Bearer <token>'")
			return
		}
		u, err := s.svc.Authenticate(r.Context(), strings.TrimSpace(token))
		if err != nil {
			if dynabench.IsCode(err, dynabench.EUNAUTHORIZED) {
				writeError(w, http.StatusUnauthorized, dynabench.EUNAUTHORIZED, "Authorization", "invalid or expired token")
			} else {
				he := toHTTPError(r.Context(), s.log, err).(*ErrorBody)
				writeJSON(w, he.status, he)
			}
			return
		}
		next.ServeHTTP(w, r.WithContext(dynabench.NewContextWithUser(r.Context(), u)))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// instrument gives every request an id, logs it (never its headers or body) and counts it.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := newRequestID()
		w.Header().Set("X-Request-Id", id)
		rec := &statusRecorder{ResponseWriter: w}
		ctx := context.WithValue(r.Context(), requestIDKey{}, id)
		r = r.WithContext(context.WithValue(ctx, clientKey{}, s.clientAddr(r)))
		// The route is looked up here, not read from r.Pattern afterwards: the handlers further in
		// get a copy of r (authenticate adds the user), and the mux sets Pattern on that copy only.
		_, route := s.mux.Handler(r)
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		if route == "" {
			route = "unmatched"
		}
		d := time.Since(start)
		s.metrics.requests.WithLabelValues(route, strconv.Itoa(rec.status)).Inc()
		s.metrics.latency.WithLabelValues(route).Observe(d.Seconds())
		level := -4 // debug for health checks and metrics scrapes
		if !strings.HasPrefix(route, "GET /healthz") && !strings.HasPrefix(route, "GET /metrics") && !strings.HasPrefix(route, "GET /readyz") {
			level = 0
		}
		s.log.Log(r.Context(), slogLevel(level, rec.status), "request", "method", r.Method, "route", route,
			"status", rec.status, "duration_ms", d.Milliseconds(), "request_id", id)
	})
}

func newRequestID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// recoverer turns a panic into a 500 and one log line with the stack; the process keeps serving.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic", "value", v, "stack", string(debug.Stack()), "request_id", requestID(r.Context()))
				writeError(w, http.StatusInternalServerError, dynabench.EINTERNAL, "", "internal error; it has been logged")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// clientAddr is the address rate limits key on.
func (s *Server) clientAddr(r *http.Request) string { return ratelimit.ClientAddr(r, s.opt.TrustProxy) }

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	examples *prometheus.CounterVec
	model    *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynabench_http_requests_total",
			Help: "HTTP requests by route pattern and status."}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "dynabench_http_request_duration_seconds",
			Help: "HTTP request latency by route pattern.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"route"}),
		examples: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dynabench_examples_total",
			Help: "Examples submitted, by task and outcome (fooled, not_fooled, pending, model_error, sandbox)."}, []string{"task", "outcome"}),
		model: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "dynabench_example_submit_seconds",
			Help: "Time to submit an example including the model call, by task.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"task"}),
	}
	reg.MustRegister(m.requests, m.latency, m.examples, m.model)
	return m
}
