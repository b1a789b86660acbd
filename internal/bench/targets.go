package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
)

// Server is the real server's example-submit endpoint as a Target.
func (env *Env) Server() Target {
	return &serverTarget{env: env, url: env.Main.URL() + "/api/v1/tasks/" + env.task + "/examples"}
}

// BaselineTarget is the baseline's endpoint, sent the same bodies.
func (env *Env) BaselineTarget() Target { return &baselineTarget{env: env, url: env.Baseline.URL} }

// body is the payload of request seq of client i: same bytes whichever target gets it.
func (env *Env) body(i, seq int) ([]byte, error) {
	cs := env.contexts[i%len(env.contexts)]
	c := cs[(seq%len(cs)+len(cs))%len(cs)]
	return env.inputs.body(i, seq, c)
}

func (env *Env) post(ctx context.Context, url string, i, seq int) (*http.Request, error) {
	body, err := env.body(i, seq)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+env.token(i))
	return req, nil
}

type serverTarget struct {
	env *Env
	url string
}

func (t *serverTarget) Request(ctx context.Context, i, seq int) (*http.Request, error) {
	return t.env.post(ctx, t.url, i, seq)
}

// Check wants 201 with the model's answer; an example stored with model_error means the model in
// the loop did not answer, which this benchmark counts as a failure.
func (t *serverTarget) Check(status int, body []byte) error {
	if status != http.StatusCreated {
		return fmt.Errorf("status %d: %s", status, clip(body))
	}
	if bytes.Contains(body, []byte(`"model_error"`)) {
		return fmt.Errorf("the model in the loop failed: %s", clip(body))
	}
	if bytes.Contains(body, []byte(`"model_wrong":true`)) {
		t.env.fooled.Add(1)
	}
	return nil
}

type baselineTarget struct {
	env *Env
	url string
}

func (t *baselineTarget) Request(ctx context.Context, i, seq int) (*http.Request, error) {
	return t.env.post(ctx, t.url, i, seq)
}

func (t *baselineTarget) Check(status int, body []byte) error {
	if status != http.StatusCreated {
		return fmt.Errorf("status %d: %s", status, clip(body))
	}
	return nil
}

// clip shortens a response body for an error message.
func clip(b []byte) string {
	const n = 300
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
