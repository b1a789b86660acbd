package training

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/dynabench-go/dynabench"
)

// HandlerOptions bound what the model server accepts. Zero values take the defaults noted.
type HandlerOptions struct {
	MaxBodyBytes int64        // a request body's limit; 1 MiB by default
	MaxBatch     int          // samples in one batch_evaluation; 256 by default
	Log          *slog.Logger // for failures that are the server's fault; none by default
}

// NewHandler serves a model over Dynabench's model protocol (Dynalab 2.0), so that the platform's
// dynalab adapter, and Dynabench itself, can call it:
//
//	POST /model/single_evaluation   {model-input fields}                → {output fields}
//	POST /model/batch_evaluation    {"dataset_samples": [{...}, ...]}   → [{output fields}, ...] in order
//	GET  /healthz (and GET /)       → {"status": "ok", "task", "kind", "model", "model_sha256"}
//
// Bad requests get a 4xx and {"error": {"code", "message", "field"?}}, the platform API's error shape:
// 400 for a body that is not the JSON expected, 413 past the limits, 422 for an input the model cannot
// read (a missing or non-string field), naming the field or sample.
func NewHandler(p dynabench.Predictor, m *Manifest, o HandlerOptions) http.Handler {
	s := &server{p: p, m: m, maxBody: cmp.Or(o.MaxBodyBytes, 1<<20), maxBatch: cmp.Or(o.MaxBatch, 256), log: o.Log}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /model/single_evaluation", s.single)
	mux.HandleFunc("POST /model/batch_evaluation", s.batch)
	mux.HandleFunc("GET /healthz", s.health)
	mux.HandleFunc("GET /{$}", s.health)
	mux.HandleFunc("/model/single_evaluation", methodNotAllowed("POST"))
	mux.HandleFunc("/model/batch_evaluation", methodNotAllowed("POST"))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, dynabench.ENOTFOUND, "", "no such route: "+r.URL.Path)
	})
	return mux
}

type server struct {
	p        dynabench.Predictor
	m        *Manifest
	maxBody  int64
	maxBatch int
	log      *slog.Logger
}

func (s *server) health(w http.ResponseWriter, _ *http.Request) {
	body := map[string]any{"status": "ok"}
	if s.m != nil {
		body["task"], body["kind"], body["model"], body["model_sha256"] = s.m.Task, s.m.Kind, s.m.Model, s.m.ModelSHA256
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *server) single(w http.ResponseWriter, r *http.Request) {
	var input map[string]any
	if !s.decode(w, r, &input, "a JSON object of the model's input fields") {
		return
	}
	out, err := s.p.Predict(r.Context(), input)
	if err != nil {
		s.modelError(w, r, "", err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) batch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Samples *[]json.RawMessage `json:"dataset_samples"`
	}
	if !s.decode(w, r, &req, `{"dataset_samples": [...]}`) {
		return
	}
	if req.Samples == nil {
		writeError(w, http.StatusUnprocessableEntity, dynabench.EINVALID, "dataset_samples", "required: a list of model inputs")
		return
	}
	samples := *req.Samples
	if len(samples) > s.maxBatch {
		writeError(w, http.StatusRequestEntityTooLarge, dynabench.ETOOLARGE, "dataset_samples",
			fmt.Sprintf("%d samples; at most %d per batch", len(samples), s.maxBatch))
		return
	}
	out := make([]map[string]any, len(samples))
	for i, raw := range samples {
		field := fmt.Sprintf("dataset_samples[%d]", i)
		var input map[string]any
		if err := json.Unmarshal(raw, &input); err != nil || input == nil {
			writeError(w, http.StatusUnprocessableEntity, dynabench.EINVALID, field, "must be a JSON object of the model's input fields")
			return
		}
		o, err := s.p.Predict(r.Context(), input)
		if err != nil {
			s.modelError(w, r, field, err)
			return
		}
		out[i] = o
	}
	writeJSON(w, http.StatusOK, out)
}

// decode reads one JSON value of the body into v, answering the error itself when it cannot.
func (s *server) decode(w http.ResponseWriter, r *http.Request, v any, want string) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, s.maxBody))
	err := dec.Decode(v)
	if err == nil && dec.Decode(new(json.RawMessage)) != io.EOF {
		err = errors.New("trailing data")
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, dynabench.ETOOLARGE, "", fmt.Sprintf("the body is larger than %d bytes", s.maxBody))
		return false
	case err != nil:
		writeError(w, http.StatusBadRequest, dynabench.EMALFORMED, "", "the body must be "+want)
		return false
	case v == nil:
		return true
	}
	if m, ok := v.(*map[string]any); ok && *m == nil {
		writeError(w, http.StatusBadRequest, dynabench.EMALFORMED, "", "the body must be "+want)
		return false
	}
	return true
}

// modelError answers a failed prediction: the input's fault is a 422, a request that ended (client
// gone, deadline, shutdown) a 503.
func (s *server) modelError(w http.ResponseWriter, r *http.Request, field string, err error) {
	me := dynabench.AsModelError(err)
	switch {
	case me.Kind == dynabench.ModelInvalidAnswer:
		writeError(w, http.StatusUnprocessableEntity, dynabench.EINVALID, field, me.Err.Error())
	case r.Context().Err() != nil || me.Kind == dynabench.ModelTimeout:
		writeError(w, http.StatusServiceUnavailable, dynabench.EUNAVAILABLE, field, "the request ended before the model answered")
	default:
		s.log.Error("model server: prediction failed", "error", err)
		writeError(w, http.StatusInternalServerError, dynabench.EINTERNAL, field, "internal error")
	}
}

func methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "", r.Method+" is not allowed; use "+allow)
	}
}

// errorObject is the platform API's error shape.
type errorObject struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func writeError(w http.ResponseWriter, status int, code, field, msg string) {
	writeJSON(w, status, map[string]errorObject{"error": {Code: code, Message: msg, Field: field}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
