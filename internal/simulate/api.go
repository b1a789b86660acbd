package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client speaks the platform's JSON API (/api/v1) for the simulation: accounts, the annotators'
// actions and the owner's round, release, training and evaluation actions.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:8080, without /api/v1
	HTTP    *http.Client
}

// NewClient returns a client of the server at baseURL.
func NewClient(baseURL string) *Client {
	// Training is synchronous and may take a while on a busy machine: a generous timeout.
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTP: &http.Client{Timeout: 5 * time.Minute}}
}

// APIError is a non-2xx answer.
type APIError struct {
	Method, Path string
	Status       int
	Code         string // the error object's code, when the body has one
	Message      string
	RetryAfter   time.Duration // from a 429's Retry-After header or message
}

func (e *APIError) Error() string {
	msg := e.Message
	if e.Code != "" {
		msg = e.Code + ": " + msg
	}
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, msg)
}

// StatusOf returns the HTTP status of an *APIError in err's chain, or 0.
func StatusOf(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// rawBody is a request body sent as is.
type rawBody struct {
	contentType string
	data        []byte
}

var tryAgainRE = regexp.MustCompile(`try again in (\d+) s`)

// Do sends a request with the bearer token (when not empty) and body (nil, a rawBody, or a value
// encoded as JSON), and decodes a JSON answer into out (when not nil). It returns the status; any
// status outside 2xx is an *APIError.
func (c *Client) Do(ctx context.Context, method, path, token string, body, out any) (int, error) {
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case rawBody:
		rd, ctype = bytes.NewReader(b.data), b.contentType
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			return 0, err
		}
		rd, ctype = bytes.NewReader(buf), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return 0, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		ae := &APIError{Method: method, Path: path, Status: resp.StatusCode}
		var eb struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
				Field   string `json:"field"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &eb) == nil && eb.Error.Message != "" {
			ae.Code, ae.Message = eb.Error.Code, eb.Error.Message
			if eb.Error.Field != "" {
				ae.Message = eb.Error.Field + ": " + ae.Message
			}
		} else {
			ae.Message = strings.TrimSpace(string(data))
			if len(ae.Message) > 500 {
				ae.Message = ae.Message[:500] + "…"
			}
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			ae.RetryAfter = time.Duration(s) * time.Second
		} else if m := tryAgainRE.FindStringSubmatch(ae.Message); m != nil {
			s, _ := strconv.Atoi(m[1])
			ae.RetryAfter = time.Duration(s) * time.Second
		}
		return resp.StatusCode, ae
	}
	if out != nil && len(data) > 0 && resp.StatusCode != http.StatusNoContent {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: undecodable answer: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// Login returns a session token for the account.
func (c *Client) Login(ctx context.Context, username, password string) (string, error) {
	var out struct {
		Token string `json:"token"`
	}
	err := c.retry429(ctx, func() error {
		_, err := c.Do(ctx, http.MethodPost, "/api/v1/auth/login", "", map[string]string{"username": username, "password": password}, &out)
		return err
	})
	return out.Token, err
}

// EnsureUser registers the account through open registration, or logs in when the username is
// taken (a second run against the same server); it waits out the register and login rate limits.
func (c *Client) EnsureUser(ctx context.Context, username, password string) (string, error) {
	var out struct {
		Token string `json:"token"`
	}
	err := c.retry429(ctx, func() error {
		_, err := c.Do(ctx, http.MethodPost, "/api/v1/auth/register", "",
			map[string]string{"username": username, "email": username + "@simulate.invalid", "password": password}, &out)
		return err
	})
	if StatusOf(err) == http.StatusConflict {
		return c.Login(ctx, username, password)
	}
	return out.Token, err
}

// retry429 calls f until it succeeds, fails otherwise than with 429, or ctx ends; it sleeps what the
// server asked for (5 s when it said nothing).
func (c *Client) retry429(ctx context.Context, f func() error) error {
	for {
		err := f()
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests {
			return err
		}
		wait := ae.RetryAfter
		if wait <= 0 {
			wait = 5 * time.Second
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait + 200*time.Millisecond):
		}
	}
}

// Accounts returns tokens for writers and validators named <prefix>-w<i> and <prefix>-v<i>,
// registered (or logged in) through the API. Passwords derive from the names: these are throwaway
// simulation accounts. Registration is rate-limited per address (5 a minute by default), so a
// first run with many annotators waits a minute or two.
func (c *Client) Accounts(ctx context.Context, prefix string, writers, validators int) (w, v []string, err error) {
	get := func(role string, n int) ([]string, error) {
		var tokens []string
		for i := range n {
			name := fmt.Sprintf("%s-%s%d", prefix, role, i)
			tok, err := c.EnsureUser(ctx, name, "simulate-"+name)
			if err != nil {
				return nil, fmt.Errorf("simulate: account %s: %w", name, err)
			}
			tokens = append(tokens, tok)
		}
		return tokens, nil
	}
	if w, err = get("w", writers); err != nil {
		return nil, nil, err
	}
	if v, err = get("v", validators); err != nil {
		return nil, nil, err
	}
	return w, v, nil
}

// APILoop is a Loop over the platform's HTTP API: writer i acts with Writers[i]'s token, validator
// i with Validators[i]'s (distinct accounts: nobody validates their own example). It adds no
// randomness: a run is as deterministic as the server's context picking.
type APILoop struct {
	Client     *Client
	Writers    []string // tokens
	Validators []string // tokens
	// Reader reads examples' status: a task owner's or an admin's token; empty means the creator's.
	Reader string
	// Round restricts validation to one round's examples; 0 means the task's current round.
	Round int

	mu      sync.Mutex
	creator map[int64]int // example id → writer
}

func (l *APILoop) writer(i int) (string, error) {
	if i < 0 || i >= len(l.Writers) {
		return "", fmt.Errorf("simulate: writer %d of %d", i, len(l.Writers))
	}
	return l.Writers[i], nil
}

func (l *APILoop) validator(i int) (string, error) {
	if i < 0 || i >= len(l.Validators) {
		return "", fmt.Errorf("simulate: validator %d of %d", i, len(l.Validators))
	}
	return l.Validators[i], nil
}

// contextJSON is GET /tasks/{code}/context's answer.
type contextJSON struct {
	ID      string         `json:"id"`
	Context map[string]any `json:"context"`
	Tag     string         `json:"tag"`
	Round   int            `json:"round"`
}

// exampleJSON is an example as the API shows it.
type exampleJSON struct {
	ID         string         `json:"id"`
	Round      int            `json:"round"`
	Input      map[string]any `json:"input"`
	ModelWrong *bool          `json:"model_wrong"`
	ModelError string         `json:"model_error"`
	Status     string         `json:"status"`
}

// PickContext implements Loop.
func (l *APILoop) PickContext(ctx context.Context, task string, writer int) (Context, error) {
	tok, err := l.writer(writer)
	if err != nil {
		return Context{}, err
	}
	var c contextJSON
	if _, err := l.Client.Do(ctx, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(task)+"/context", tok, nil, &c); err != nil {
		return Context{}, err
	}
	id, err := strconv.ParseInt(c.ID, 10, 64)
	if err != nil {
		return Context{}, fmt.Errorf("simulate: context id %q: %w", c.ID, err)
	}
	return Context{ID: id, Fields: c.Context, Tag: c.Tag}, nil
}

// Submit implements Loop. An example the model failed to answer (model_wrong null) counts as not
// fooling.
func (l *APILoop) Submit(ctx context.Context, task string, writer int, c Context, input map[string]any) (bool, int64, error) {
	tok, err := l.writer(writer)
	if err != nil {
		return false, 0, err
	}
	var out struct {
		Example exampleJSON `json:"example"`
	}
	body := map[string]any{"context_id": strconv.FormatInt(c.ID, 10), "input": input}
	if _, err := l.Client.Do(ctx, http.MethodPost, "/api/v1/tasks/"+url.PathEscape(task)+"/examples", tok, body, &out); err != nil {
		return false, 0, err
	}
	id, err := strconv.ParseInt(out.Example.ID, 10, 64)
	if err != nil {
		return false, 0, fmt.Errorf("simulate: example id %q: %w", out.Example.ID, err)
	}
	l.mu.Lock()
	if l.creator == nil {
		l.creator = map[int64]int{}
	}
	l.creator[id] = writer
	l.mu.Unlock()
	return out.Example.ModelWrong != nil && *out.Example.ModelWrong, id, nil
}

// NextToValidate implements Loop: 204 means nothing is due.
func (l *APILoop) NextToValidate(ctx context.Context, task string, validator int) (Pending, bool, error) {
	tok, err := l.validator(validator)
	if err != nil {
		return Pending{}, false, err
	}
	path := "/api/v1/tasks/" + url.PathEscape(task) + "/validations/next"
	if l.Round > 0 {
		path += "?round=" + strconv.Itoa(l.Round)
	}
	var out struct {
		Example exampleJSON `json:"example"`
	}
	status, err := l.Client.Do(ctx, http.MethodGet, path, tok, nil, &out)
	if err != nil {
		return Pending{}, false, err
	}
	if status == http.StatusNoContent || out.Example.ID == "" {
		return Pending{}, false, nil
	}
	id, err := strconv.ParseInt(out.Example.ID, 10, 64)
	if err != nil {
		return Pending{}, false, fmt.Errorf("simulate: example id %q: %w", out.Example.ID, err)
	}
	return Pending{ExampleID: id, Input: out.Example.Input}, true, nil
}

// Validate implements Loop.
func (l *APILoop) Validate(ctx context.Context, _ string, validator int, exampleID int64, correct bool) error {
	tok, err := l.validator(validator)
	if err != nil {
		return err
	}
	label := "incorrect"
	if correct {
		label = "correct"
	}
	_, err = l.Client.Do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/examples/%d/validations", exampleID), tok,
		map[string]string{"label": label}, nil)
	return err
}

// Verified implements Loop: the example's status is verified.
func (l *APILoop) Verified(ctx context.Context, _ string, exampleID int64) (bool, error) {
	tok := l.Reader
	if tok == "" {
		l.mu.Lock()
		w, ok := l.creator[exampleID]
		l.mu.Unlock()
		if !ok {
			return false, fmt.Errorf("simulate: example %d was not submitted through this loop", exampleID)
		}
		tok = l.Writers[w]
	}
	var out struct {
		Example exampleJSON `json:"example"`
	}
	if _, err := l.Client.Do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/examples/%d", exampleID), tok, nil, &out); err != nil {
		return false, err
	}
	return out.Example.Status == "verified", nil
}
