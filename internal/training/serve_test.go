package training_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench/internal/training"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	a := smallArtifact(t, "nli")
	srv := httptest.NewServer(training.NewHandler(a.Predictor(), &a.Manifest, training.HandlerOptions{MaxBodyBytes: 4096, MaxBatch: 3}))
	defer srv.Close()

	sample := `{"context": "A man is sleeping on a couch.", "hypothesis": "A man is awake."}`
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string // a substring of the response
	}{
		{"health", "GET", "/healthz", "", 200, `"status":"ok"`},
		{"root health", "GET", "/", "", 200, `"task":"nli"`},
		{"single", "POST", "/model/single_evaluation", sample, 200, `"prob":{`},
		{"batch", "POST", "/model/batch_evaluation", `{"dataset_samples": [` + sample + `, ` + sample + `]}`, 200, `[{"label":`},
		{"empty batch", "POST", "/model/batch_evaluation", `{"dataset_samples": []}`, 200, `[]`},
		{"not json", "POST", "/model/single_evaluation", `{"context":`, 400, `"code":"malformed"`},
		{"json null", "POST", "/model/single_evaluation", `null`, 400, `"code":"malformed"`},
		{"json list", "POST", "/model/single_evaluation", `[1]`, 400, `"code":"malformed"`},
		{"trailing", "POST", "/model/single_evaluation", sample + `{}`, 400, `"code":"malformed"`},
		{"missing field", "POST", "/model/single_evaluation", `{"context": "x"}`, 422, `hypothesis`},
		{"wrong type", "POST", "/model/single_evaluation", `{"context": "x", "hypothesis": 3}`, 422, `"code":"invalid"`},
		{"too large", "POST", "/model/single_evaluation", `{"context": "` + strings.Repeat("x", 5000) + `"}`, 413, `"code":"too_large"`},
		{"no samples", "POST", "/model/batch_evaluation", `{}`, 422, `"field":"dataset_samples"`},
		{"samples not a list", "POST", "/model/batch_evaluation", `{"dataset_samples": {}}`, 400, `"code":"malformed"`},
		{"bad sample", "POST", "/model/batch_evaluation", `{"dataset_samples": [` + sample + `, 5]}`, 422, `"field":"dataset_samples[1]"`},
		{"unreadable sample", "POST", "/model/batch_evaluation", `{"dataset_samples": [` + sample + `, {"context": "x"}]}`, 422, `"field":"dataset_samples[1]"`},
		{"batch too big", "POST", "/model/batch_evaluation", `{"dataset_samples": [{}, {}, {}, {}]}`, 413, `at most 3`},
		{"wrong method", "GET", "/model/single_evaluation", "", 405, `"code":"method_not_allowed"`},
		{"unknown route", "POST", "/predict", sample, 404, `"code":"not_found"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			must(t, err)
			resp, err := http.DefaultClient.Do(req)
			must(t, err)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
				t.Fatalf("%d %s, want %d and %q", resp.StatusCode, body, tc.status, tc.want)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("content type %q", ct)
			}
			if !json.Valid(body) {
				t.Fatalf("not JSON: %s", body)
			}
		})
	}

	// The batch answers in order, each as the single route would.
	resp, err := http.Post(srv.URL+"/model/batch_evaluation", "application/json", strings.NewReader(
		`{"dataset_samples": [{"context": "A dog runs.", "hypothesis": "A dog sleeps."}, `+sample+`]}`))
	must(t, err)
	var batch []map[string]any
	must(t, json.NewDecoder(resp.Body).Decode(&batch))
	resp.Body.Close()
	for i, in := range []map[string]any{
		{"context": "A dog runs.", "hypothesis": "A dog sleeps."},
		{"context": "A man is sleeping on a couch.", "hypothesis": "A man is awake."},
	} {
		want, err := a.Predictor().Predict(ctx, in)
		must(t, err)
		if batch[i]["label"] != want["label"] {
			t.Fatalf("sample %d: %v, want %v", i, batch[i], want)
		}
	}
}
