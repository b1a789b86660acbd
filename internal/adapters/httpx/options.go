package httpx

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// Options are the defaults every model client starts from; a model's own options (timeout_ms,
// max_retries, max_concurrency, breaker_failures, breaker_cooldown_ms) override the per-model ones.
// The zero value is usable: WithDefaults fills every unset field. Build Options once (one registry)
// so every model shares one connection pool.
type Options struct {
	// Client sends the requests; nil builds one. Redirects are never followed, whatever it says:
	// a model endpoint that redirects is misconfigured, and following it could send the API key on.
	Client *http.Client

	// Timeout bounds one call, retries included, unless the caller's context ends sooner (30s).
	Timeout time.Duration
	// MaxRetries is how many times a call is retried after an idempotent failure (2; negative: never).
	MaxRetries int
	// BackoffBase and BackoffMax shape the exponential backoff between retries (100ms, 2s).
	BackoffBase, BackoffMax time.Duration
	// RetryAfterMax caps the Retry-After a 429 may ask for; asking more ends the call (10s).
	RetryAfterMax time.Duration
	// MaxConcurrent bounds the calls in flight to one model (8).
	MaxConcurrent int
	// BreakerFailures is how many consecutive failed calls open the circuit (5; negative: never).
	BreakerFailures int
	// BreakerCooldown is how long an open circuit waits before letting one probe through (30s).
	BreakerCooldown time.Duration
	// MaxBodyBytes caps an answer; a larger one is an invalid answer (8 MiB).
	MaxBodyBytes int64

	// SecretEnvPrefix is the prefix every api_key_env variable must have ("DYNABENCH_MODEL_"), so a
	// model's options cannot name the database password and have it sent to their own server.
	SecretEnvPrefix string
	// SecretDir is the directory api_key_file paths are read from (relative to it, never escaping
	// it, symlinks included); empty refuses api_key_file.
	SecretDir string
	// DenyPrivateNetworks refuses to connect to loopback, private, link-local and unspecified
	// addresses, so models registered by users cannot reach the operator's internal services.
	DenyPrivateNetworks bool

	// LookupEnv reads environment variables (os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Now is the clock the circuit breaker and the health stats read (time.Now).
	Now func() time.Time
	// Sleep waits between retries, returning early with ctx's error (a timer).
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1) that spreads retries out (math/rand/v2).
	Jitter func() float64
}

// Default values of Options.
const (
	DefaultTimeout         = 30 * time.Second
	DefaultMaxRetries      = 2
	DefaultBackoffBase     = 100 * time.Millisecond
	DefaultBackoffMax      = 2 * time.Second
	DefaultRetryAfterMax   = 10 * time.Second
	DefaultMaxConcurrent   = 8
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
	DefaultMaxBodyBytes    = 8 << 20
	DefaultSecretEnvPrefix = "DYNABENCH_MODEL_"
)

// WithDefaults returns o with every unset field filled in, including a new shared HTTP client.
func (o Options) WithDefaults() Options {
	setDefault(&o.Timeout, DefaultTimeout)
	setDefault(&o.MaxRetries, DefaultMaxRetries)
	setDefault(&o.BackoffBase, DefaultBackoffBase)
	setDefault(&o.BackoffMax, DefaultBackoffMax)
	setDefault(&o.RetryAfterMax, DefaultRetryAfterMax)
	setDefault(&o.MaxConcurrent, DefaultMaxConcurrent)
	setDefault(&o.BreakerFailures, DefaultBreakerFailures)
	setDefault(&o.BreakerCooldown, DefaultBreakerCooldown)
	setDefault(&o.MaxBodyBytes, DefaultMaxBodyBytes)
	setDefault(&o.SecretEnvPrefix, DefaultSecretEnvPrefix)
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	if o.Client == nil {
		o.Client = &http.Client{Transport: newTransport(o.DenyPrivateNetworks)}
	}
	return o
}

func setDefault[T comparable](p *T, def T) {
	var zero T
	if *p == zero {
		*p = def
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newTransport is the default transport with a pool sized for batch fan-out, buffers sized for
// batches, and optionally a
// dialer that refuses private addresses (checked on the resolved address, so DNS cannot dodge it).
func newTransport(denyPrivate bool) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	t.ResponseHeaderTimeout = 0 // the call's deadline bounds everything
	// Batches are KiBs to tens of KiB: with the default 4 KiB buffer, a request goes out in several
	// writes (a batch of 32 NLI pairs was 10% slower for crossing 4 KiB by a few header bytes).
	t.WriteBufferSize = 32 << 10
	if denyPrivate {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: refusePrivate}
		t.DialContext = d.DialContext
	}
	return t
}

var errPrivate = errors.New("address is on a private network, which this server does not call")

func refusePrivate(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("unexpected address %q", address)
	}
	ip := ap.Addr().Unmap()
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() {
		return errPrivate
	}
	return nil
}
