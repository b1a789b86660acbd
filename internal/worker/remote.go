package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters"
	"github.com/dynabench-go/dynabench/internal/service"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// Remote is the Source of a worker on another machine: the server's API, with the token of the
// worker's owner (an admin's workers take any job; a model builder's only their own models').
type Remote struct {
	Server string // base URL, e.g. https://dynabench.example.org
	Token  string
	Name   string
	Client *http.Client
}

func (r *Remote) client() *http.Client {
	if r.Client != nil {
		return r.Client
	}
	return &http.Client{Timeout: 5 * time.Minute}
}

// Call sends a JSON request to the server's API and decodes a JSON answer into out (when not nil).
// API errors come back as *dynabench.Error with the server's code.
func (r *Remote) Call(ctx context.Context, method, path string, body, out any) error {
	_, err := r.call(ctx, method, path, body, out)
	return err
}

// call is Call that also returns the HTTP status.
func (r *Remote) call(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(r.Server, "/")+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+r.Token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client().Do(req)
	if err != nil {
		return 0, dynabench.Errorf(dynabench.EUNAVAILABLE, "the server is unreachable: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 512<<20))
	if err != nil {
		return resp.StatusCode, dynabench.Errorf(dynabench.EUNAVAILABLE, "reading the server's answer: %v", err)
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error dynabench.Error `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error.Code != "" {
			return resp.StatusCode, &e.Error
		}
		return resp.StatusCode, dynabench.Errorf(dynabench.EUNAVAILABLE, "%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("decoding %s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// remoteWork is a leased job as the API sends it.
type remoteWork struct {
	service.Work
	Model struct {
		ID      string         `json:"id"`
		Name    string         `json:"name"`
		Kind    string         `json:"kind"`
		URL     string         `json:"url"`
		Options map[string]any `json:"options"`
	} `json:"model"`
}

func (r *Remote) Lease(ctx context.Context) (*service.Work, error) {
	var rw remoteWork
	status, err := r.call(ctx, http.MethodPost, "/api/v1/jobs/lease", map[string]any{"worker": r.Name, "kinds": []string{service.JobEvaluate}}, &rw)
	if err != nil {
		return nil, err
	}
	if status == http.StatusNoContent {
		return nil, dynabench.Errorf(dynabench.ENOTFOUND, "no job is due")
	}
	id, err := strconv.ParseInt(rw.Model.ID, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("the server sent a model id %q", rw.Model.ID)
	}
	w := rw.Work
	w.Model = &dynabench.Model{ID: id, Name: rw.Model.Name, Kind: rw.Model.Kind, URL: rw.Model.URL, Options: rw.Model.Options}
	return &w, nil
}

func (r *Remote) Heartbeat(ctx context.Context, w *service.Work) error {
	_, err := r.call(ctx, http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/heartbeat", w.JobID), map[string]any{"lease": w.Lease}, nil)
	return err
}

func (r *Remote) Complete(ctx context.Context, w *service.Work, rep service.WorkReport) error {
	_, err := r.call(ctx, http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/complete", w.JobID), map[string]any{"lease": w.Lease, "report": rep}, nil)
	return err
}

func (r *Remote) Fail(ctx context.Context, w *service.Work, f service.WorkFailure) error {
	_, err := r.call(ctx, http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/fail", w.JobID), map[string]any{"lease": w.Lease, "failure": f}, nil)
	return err
}

// RemotePredictors builds models served over HTTP next to the worker: the adapter comes from the
// registry, its field mapping from the task's config (read once per task from the server). API keys
// named by api_key_env are read from this machine's environment.
func RemotePredictors(r *Remote, reg *adapters.Registry) Predictors {
	var mu sync.Mutex
	specs := map[string]adapters.Spec{}
	models := map[int64]dynabench.Predictor{}
	return func(ctx context.Context, w *service.Work) (dynabench.Predictor, error) {
		mu.Lock()
		defer mu.Unlock()
		if p, ok := models[w.Model.ID]; ok {
			return p, nil
		}
		spec, ok := specs[w.Task]
		if !ok {
			var task struct {
				Config map[string]any `json:"config"`
			}
			if _, err := r.call(ctx, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(w.Task), nil, &task); err != nil {
				return nil, err
			}
			cfg, rep := taskconfig.ParseMap(task.Config)
			if cfg == nil || len(rep.Problems) > 0 {
				return nil, fmt.Errorf("the task config of %s does not parse here", w.Task)
			}
			spec = adapters.SpecFor(cfg)
			specs[w.Task] = spec
		}
		p, err := reg.New(ctx, w.Model, spec)
		if err != nil {
			return nil, &dynabench.ModelError{Kind: dynabench.ModelUnreachable, Err: err}
		}
		models[w.Model.ID] = p
		return p, nil
	}
}
