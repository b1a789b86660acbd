// Package httpx is the HTTP layer every model adapter shares: one Client per registered model, which
// gives each call a deadline, retries idempotent failures with backoff, bounds the calls in flight,
// trips a circuit breaker when the model keeps failing, caps answers, and turns every failure into a
// *dynabench.ModelError whose message is safe to show and log (it never holds the API key).
//
// What is retried, and why: a request that never reached the model (connection refused, reset or
// closed before any answer) and the statuses that say "try again" (502, 503, 504, and 429 within
// RetryAfterMax). Model calls are pure predictions, so resending one is harmless. Nothing else is
// retried: another 4xx will fail the same way, a 500 is a bug in the model, a connection lost in
// the middle of an answer says the model is in trouble, and a timeout has used the whole deadline.
//
// What opens the circuit: calls that fail because the model is unreachable, timed out, answered
// 5xx or 429 (after retries). A model that answers, even garbage or a 4xx, is up; a caller that
// gives up says nothing about the model.
package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dynabench-go/dynabench"
)

// Client calls one model endpoint. It is safe for concurrent use; keep one per model for as long as
// the model is registered, since its breaker and concurrency limit live in it.
type Client struct {
	prefix, query string // the model's URL without and with only its query
	display       string // scheme://host/path, for messages: no credentials, no query
	hc            *http.Client
	// auth sets the Authorization header and scrub removes the key from server text. Both close
	// over the key, which is therefore in no field: no %v of a Client can print it.
	auth  func(http.Header)
	scrub func(string) string

	timeout                                time.Duration
	retries                                int
	backoffBase, backoffMax, retryAfterMax time.Duration
	maxBody                                int64
	sem                                    chan struct{}
	br                                     *breaker
	st                                     stats
	now                                    func() time.Time
	sleep                                  func(context.Context, time.Duration) error
	jitter                                 func() float64
}

// NewClient builds the client for model m, reading the model's common options from o (url,
// timeout_ms, max_retries, max_concurrency, breaker_failures, breaker_cooldown_ms, api_key_env,
// api_key_file) on top of the defaults d. Problems are recorded in o: check o.Err() before use.
func NewClient(m *dynabench.Model, o *Opts, d Options) *Client {
	d = d.WithDefaults()
	hc := *d.Client
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c := &Client{
		hc:            &hc,
		timeout:       time.Duration(o.Int("timeout_ms", millis(d.Timeout), 1, 600_000)) * time.Millisecond,
		retries:       o.Int("max_retries", max(d.MaxRetries, 0), 0, 10),
		backoffBase:   d.BackoffBase,
		backoffMax:    d.BackoffMax,
		retryAfterMax: d.RetryAfterMax,
		maxBody:       d.MaxBodyBytes,
		sem:           make(chan struct{}, o.Int("max_concurrency", d.MaxConcurrent, 1, 1024)),
		now:           d.Now,
		sleep:         d.Sleep,
		jitter:        d.Jitter,
	}
	failures := o.Int("breaker_failures", max(d.BreakerFailures, 0), 0, 1000)
	cooldown := time.Duration(o.Int("breaker_cooldown_ms", millis(d.BreakerCooldown), 1, 86_400_000)) * time.Millisecond
	c.br = newBreaker(failures, cooldown, d.Now)
	c.setURL(o, m)
	c.setKey(readAPIKey(o, d))
	return c
}

func millis(d time.Duration) int { return int(d / time.Millisecond) }

// setURL checks the model's URL. Messages never echo it: its query could hold a token.
func (c *Client) setURL(o *Opts, m *dynabench.Model) {
	raw := strings.TrimSpace(m.URL)
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		o.Problem("url", "required for a %s model", m.Kind)
	case err != nil || !u.IsAbs() || u.Opaque != "":
		o.Problem("url", "not an absolute URL")
	case u.Scheme != "http" && u.Scheme != "https":
		o.Problem("url", "must be an http or https URL")
	case u.Host == "":
		o.Problem("url", "must name a host")
	case u.User != nil:
		o.Problem("url", "must not hold credentials; give the API key with options.api_key_env or options.api_key_file")
	case u.Fragment != "":
		o.Problem("url", "must not have a #fragment")
	default:
		q := u.RawQuery
		u.RawQuery, u.ForceQuery = "", false
		c.prefix = strings.TrimRight(u.String(), "/")
		c.display = c.prefix
		if q != "" {
			c.query = "?" + q
		}
	}
}

func (c *Client) setKey(key string) {
	if key == "" {
		c.auth = func(http.Header) {}
		c.scrub = func(s string) string { return s }
		return
	}
	bearer := "Bearer " + key
	c.auth = func(h http.Header) { h.Set("Authorization", bearer) }
	c.scrub = func(s string) string { return strings.ReplaceAll(s, key, "[redacted]") }
}

// MaxConcurrent is the number of calls this model may have in flight, for adapters fanning out.
func (c *Client) MaxConcurrent() int { return cap(c.sem) }

// Health reports the model's call statistics and breaker state.
func (c *Client) Health() Health {
	h := c.st.snapshot()
	h.InFlight, h.MaxConcurrent = len(c.sem), cap(c.sem)
	h.Breaker, h.ConsecutiveFailures, h.OpenUntil = c.br.snapshot()
	return h
}

// Request is one call to the model.
type Request struct {
	Method string // POST when empty
	Path   string // appended to the model's URL ("/model/single_evaluation"), already escaped
	Body   any    // JSON-encoded; nil sends none
	// Decode reads a 2xx answer (at most MaxBodyBytes). Its errors are invalid answers, unless it
	// returns a *dynabench.ModelError, which is returned as is.
	Decode func(body []byte) error
}

// errCancelled marks calls the caller abandoned: they are not the model's failures.
var errCancelled = errors.New("call cancelled by the caller")

// Do makes the call: deadline, circuit breaker, concurrency slot, retries, decoding. Every error
// is a *dynabench.ModelError.
func (c *Client) Do(ctx context.Context, r Request) error {
	body, err := encode(r.Body)
	if err != nil {
		return &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: fmt.Errorf("request not sent: %w", err)}
	}
	probe, err := c.br.allow()
	if err != nil {
		c.st.shortCircuit()
		return &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: err}
	}
	start := c.now()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cl := &call{Client: c, r: r, body: body, what: c.describe(r)}
	if dl, ok := ctx.Deadline(); ok {
		cl.budget = time.Until(dl)
	}
	res := cl.run(ctx)
	c.br.record(probe, res.outcome)
	end := c.now()
	c.st.finish(end, end.Sub(start), res.reached, res.err)
	return res.err
}

func encode(body any) ([]byte, error) {
	if body == nil {
		return nil, nil
	}
	return json.Marshal(body)
}

func (c *Client) describe(r Request) string {
	method := r.Method
	if method == "" {
		method = http.MethodPost
	}
	return method + " " + c.display + r.Path
}

func (c *Client) newRequest(ctx context.Context, r Request, body []byte) (*http.Request, error) {
	method := r.Method
	if method == "" {
		method = http.MethodPost
	}
	var req *http.Request
	var err error
	if body != nil {
		req, err = http.NewRequestWithContext(ctx, method, c.prefix+r.Path+c.query, bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
	} else {
		req, err = http.NewRequestWithContext(ctx, method, c.prefix+r.Path+c.query, nil)
	}
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "dynabench-go")
	c.auth(req.Header)
	return req, nil
}
