package dynabench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Predictor is a model the platform can call: the built-in models and every HTTP adapter implement it.
// Inputs and outputs are the task's model-input and model-output fields as JSON-shaped maps, e.g.
// {"context": "...", "hypothesis": "..."} → {"label": "entailed", "prob": {"entailed": 0.8, ...}}.
// Every call honours ctx's deadline. Failures are *ModelError values.
type Predictor interface {
	Predict(ctx context.Context, input map[string]any) (map[string]any, error)
	// PredictBatch answers one output per input, in the same order.
	PredictBatch(ctx context.Context, inputs []map[string]any) ([]map[string]any, error)
}

// Kinds of model failure.
const (
	ModelUnreachable   = "unreachable"
	ModelTimeout       = "timeout"
	ModelBadStatus     = "bad_status"
	ModelInvalidAnswer = "invalid_answer"
)

// ModelError is a typed model failure the caller can show.
type ModelError struct {
	Kind string // one of the Model* kinds
	Err  error
}

func (e *ModelError) Error() string { return fmt.Sprintf("model %s: %v", e.Kind, e.Err) }
func (e *ModelError) Unwrap() error { return e.Err }

// AsModelError returns err as a *ModelError, classifying context deadlines as timeouts.
func AsModelError(err error) *ModelError {
	var me *ModelError
	if errors.As(err, &me) {
		return me
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &ModelError{Kind: ModelTimeout, Err: err}
	}
	return &ModelError{Kind: ModelUnreachable, Err: err}
}

// Model kinds, as named in the API.
const (
	KindBuiltin = "builtin"
	KindDynalab = "dynalab"
	KindOpenAI  = "openai"
	KindHF      = "hf"
	KindKServe  = "kserve"
)

// Model is a registered model of a task: built-in or an HTTP endpoint.
type Model struct {
	ID        int64
	TaskID    int64
	UserID    int64 // who registered it
	Name      string
	Kind      string
	URL       string
	Options   map[string]any // adapter options (never secrets in clear)
	Card      string         // model card, Markdown
	Published bool
	CreatedAt time.Time
}

// ModelResolver turns a registered model into something that can be called.
type ModelResolver interface {
	Predictor(ctx context.Context, m *Model) (Predictor, error)
}

// ModelHealth is what a server has seen of its calls to one model since it started.
type ModelHealth struct {
	Calls         int64
	Failures      int64
	LastError     string
	LastErrorAt   *time.Time
	LastLatencyMS float64
	Breaker       string // closed, open or half-open, for adapters with a circuit breaker
}
