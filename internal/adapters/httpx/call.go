package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dynabench-go/dynabench"
)

// call is one Do in progress.
type call struct {
	*Client
	r      Request
	body   []byte
	what   string        // "POST http://host/path", for messages
	budget time.Duration // the deadline the call started with
}

// result is how one attempt (or the whole call) ended.
type result struct {
	err     error
	outcome outcome
	reached bool          // the model answered something
	retry   bool          // an idempotent failure worth another attempt
	wait    time.Duration // what the server asked to wait (Retry-After), 0 for the usual backoff
}

func (cl *call) run(ctx context.Context) result {
	if res, ok := cl.acquire(ctx); !ok {
		return res
	}
	defer func() { <-cl.sem }()
	for attempt := 0; ; attempt++ {
		res := cl.attempt(ctx)
		if !res.retry || attempt >= cl.retries {
			return res
		}
		wait := res.wait
		if wait == 0 {
			wait = cl.backoff(attempt)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			return res // no time left to try again: the model's own failure is the better message
		}
		if err := cl.sleep(ctx, wait); err != nil {
			return cl.contextEnded(ctx)
		}
		cl.st.retried()
	}
}

// acquire takes a concurrency slot, waiting no longer than the call may.
func (cl *call) acquire(ctx context.Context) (result, bool) {
	select {
	case cl.sem <- struct{}{}:
		return result{}, true
	default:
	}
	select {
	case cl.sem <- struct{}{}:
		return result{}, true
	case <-ctx.Done():
		res := cl.contextEnded(ctx)
		res.outcome = outcomeNeutral // our queue, not the model, was slow
		if res.err != nil && errors.Is(res.err, context.DeadlineExceeded) {
			res.err = &dynabench.ModelError{Kind: dynabench.ModelTimeout, Err: fmt.Errorf(
				"%s: all %d call slots for this model stayed busy for %s: %w", cl.what, cap(cl.sem),
				roundDuration(cl.budget), context.DeadlineExceeded)}
		}
		return res, false
	}
}

// backoff is exponential with "equal jitter": half the delay fixed, half random.
func (cl *call) backoff(attempt int) time.Duration {
	d := cl.backoffBase << min(attempt, 20)
	if d <= 0 || d > cl.backoffMax {
		d = cl.backoffMax
	}
	return d/2 + time.Duration(cl.jitter()*float64(d/2))
}

func (cl *call) attempt(ctx context.Context) result {
	req, err := cl.newRequest(ctx, cl.r, cl.body)
	if err != nil {
		return result{err: cl.fail(dynabench.ModelUnreachable, "request not sent: %s", err), outcome: outcomeNeutral}
	}
	resp, err := cl.hc.Do(req)
	if err != nil {
		return cl.transportFailure(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return cl.statusFailure(resp)
	}
	data, res, ok := cl.read(ctx, resp)
	if !ok {
		return res
	}
	if cl.r.Decode != nil {
		if err := cl.r.Decode(data); err != nil {
			return result{err: cl.invalid(err), outcome: outcomeSuccess, reached: true}
		}
	}
	return result{outcome: outcomeSuccess, reached: true}
}

// read reads a 2xx body, at most maxBody bytes.
func (cl *call) read(ctx context.Context, resp *http.Response) ([]byte, result, bool) {
	tooLarge := result{err: cl.fail(dynabench.ModelInvalidAnswer, "answer too large (more than %s)", byteSize(cl.maxBody)),
		outcome: outcomeSuccess, reached: true}
	if resp.ContentLength > cl.maxBody {
		return nil, tooLarge, false
	}
	var data []byte
	var err error
	if resp.ContentLength >= 0 {
		// The length is known (and enforced by net/http): one exact allocation.
		data = make([]byte, resp.ContentLength)
		_, err = io.ReadFull(resp.Body, data)
	} else {
		data, err = io.ReadAll(io.LimitReader(resp.Body, cl.maxBody+1))
	}
	switch {
	case err != nil && ctx.Err() != nil:
		res := cl.contextEnded(ctx)
		res.reached = true
		return nil, res, false
	case err != nil:
		// Not retried: the model took the request and broke down answering it.
		return nil, result{err: cl.fail(dynabench.ModelUnreachable, "connection lost while reading the answer (%s)",
			cl.transportText(err)), outcome: outcomeFailure, reached: true}, false
	case int64(len(data)) > cl.maxBody:
		return nil, tooLarge, false
	}
	return data, result{}, true
}

func (cl *call) invalid(err error) error {
	var me *dynabench.ModelError
	if errors.As(err, &me) {
		return &dynabench.ModelError{Kind: me.Kind, Err: fmt.Errorf("%s: %s", cl.what, cl.scrub(me.Err.Error()))}
	}
	return cl.fail(dynabench.ModelInvalidAnswer, "%s", err)
}

// fail builds a model error about this call; the text is scrubbed of the API key.
func (cl *call) fail(kind, format string, args ...any) *dynabench.ModelError {
	return &dynabench.ModelError{Kind: kind, Err: errors.New(cl.scrub(cl.what + ": " + fmt.Sprintf(format, args...)))}
}

// contextEnded is the result of a call whose context ended: a timeout, or the caller giving up.
func (cl *call) contextEnded(ctx context.Context) result {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return result{err: &dynabench.ModelError{Kind: dynabench.ModelTimeout, Err: fmt.Errorf("%s: no answer within %s: %w",
			cl.what, roundDuration(cl.budget), context.DeadlineExceeded)}, outcome: outcomeFailure}
	}
	return result{err: &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: fmt.Errorf("%s: %w: %w",
		cl.what, errCancelled, context.Canceled)}, outcome: outcomeNeutral}
}

func (cl *call) transportFailure(ctx context.Context, err error) result {
	if ctx.Err() != nil {
		return cl.contextEnded(ctx)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return result{err: &dynabench.ModelError{Kind: dynabench.ModelTimeout, Err: fmt.Errorf("%s: no answer in time: %w",
			cl.what, context.DeadlineExceeded)}, outcome: outcomeFailure}
	}
	return result{err: cl.fail(dynabench.ModelUnreachable, "%s", cl.transportText(err)), outcome: outcomeFailure,
		retry: neverAnswered(err)}
}

// neverAnswered reports whether a transport error means the model cannot have answered: the
// connection was refused, or reset or closed before a response arrived.
func neverAnswered(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// transportText describes a transport error plainly, without the request URL net/http adds.
func (cl *call) transportText(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the model"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by the model"
	case errors.Is(err, errPrivate):
		return errPrivate.Error()
	case errors.As(err, &dnsErr):
		return "cannot resolve the host: " + dnsErr.Err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its URL could hold a token in the query
	}
	return clip(err.Error(), 200)
}

func (cl *call) statusFailure(resp *http.Response) result {
	text := cl.snippet(resp.Body)
	code := resp.StatusCode
	res := result{reached: true, outcome: outcomeSuccess}
	detail := ""
	switch {
	case code == http.StatusTooManyRequests:
		res.outcome, res.retry = outcomeFailure, true
		if wait, ok := retryAfter(resp.Header.Get("Retry-After"), cl.now()); ok {
			res.wait = max(wait, time.Millisecond)
			if wait > cl.retryAfterMax {
				res.retry = false
				detail = fmt.Sprintf(" (asked to retry after %s, longer than this server waits)", roundDuration(wait))
			}
		}
	case code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
		res.outcome, res.retry = outcomeFailure, true
		if wait, ok := retryAfter(resp.Header.Get("Retry-After"), cl.now()); ok && wait <= cl.retryAfterMax {
			res.wait = max(wait, time.Millisecond)
		}
	case code >= 500:
		res.outcome = outcomeFailure
	case code >= 300 && code < 400:
		detail = " (redirects are not followed: give the final URL)"
	}
	msg := fmt.Sprintf("HTTP %d%s", code, detail)
	if text != "" {
		msg += ": " + text
	}
	res.err = cl.fail(dynabench.ModelBadStatus, "%s", msg)
	return res
}

// snippet reads the start of an error body for the message, and drains a little more so the
// connection can be reused.
func (cl *call) snippet(body io.Reader) string {
	buf := make([]byte, 512)
	n, _ := io.ReadFull(body, buf)
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	return clip(cl.scrub(string(buf[:n])), 200)
}

// clip makes server text fit one log line: valid UTF-8, no control characters, at most n bytes.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, 1<<30)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
