// Package spec describes what a task expects back from a model, and reads model answers against it.
//
// Every adapter (dynalab, openai, hf, kserve, ensemble) speaks a different protocol but must hand the
// platform the task's own output fields: a label out of the task's labels with an optional probability
// per label, or a span of the context with an optional confidence. This package holds that contract
// and the tolerant-but-never-guessing readers the adapters share. It is a leaf: it imports only the
// domain package, so the adapters and the registry above them can all import it.
package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dynabench-go/dynabench"
)

// Kinds of task an adapter can serve.
const (
	// Classification: the model answers one label out of Labels, optionally with a probability per label.
	Classification = "classification"
	// ExtractiveQA: the model answers a span of the context, optionally with a confidence in [0, 1].
	ExtractiveQA = "extractive_qa"
)

// Spec tells an adapter what the task expects back, derived from the task config: the platform
// speaks in the task's field names; adapters translate to and from each protocol.
type Spec struct {
	// Kind is "classification" (a label out of Labels) or "extractive_qa" (a span of the context);
	// empty for tasks neither shape fits, which only protocols that pass answers through can serve.
	Kind string
	// Labels are the allowed labels, for classification.
	Labels []string
	// LabelField and ProbField name the output fields for classification (usually "label", "prob").
	// ProbField is empty when the task has no probability output. For a task of no known kind,
	// LabelField names the prediction field.
	LabelField, ProbField string
	// AnswerField and ConfField name the output fields for QA (usually "answer", "conf").
	AnswerField, ConfField string
	// ContextField and QuestionField name the QA input fields (usually "context", "question").
	ContextField, QuestionField string
	// TextFields are the input fields a classifier reads, in order (e.g. "context", "hypothesis").
	TextFields []string
}

// PredictionField is the output field holding the model's answer: the label or the answer.
func (s Spec) PredictionField() string {
	if s.Kind == ExtractiveQA {
		return s.AnswerField
	}
	return s.LabelField
}

// Invalidf returns an invalid_answer model error. Messages quote model text through Quote, so a
// huge or binary answer never ends up in a log line whole.
func Invalidf(format string, args ...any) *dynabench.ModelError {
	return &dynabench.ModelError{Kind: dynabench.ModelInvalidAnswer, Err: fmt.Errorf(format, args...)}
}

// Within prefixes a model error's message with where it happened ("answer 3"), keeping its kind;
// any other error becomes an invalid answer.
func Within(where string, err error) *dynabench.ModelError {
	if me, ok := err.(*dynabench.ModelError); ok {
		return &dynabench.ModelError{Kind: me.Kind, Err: fmt.Errorf("%s: %w", where, me.Err)}
	}
	return Invalidf("%s: %w", where, err)
}

// Quote renders model text for an error message: quoted, valid UTF-8, at most 60 bytes of it.
func Quote(s string) string {
	const max = 60
	if len(s) > max {
		cut := max
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(strings.ToValidUTF8(s, "\uFFFD"))
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// LabelList renders the labels for a message: "a", "b", "c".
func (s Spec) LabelList() string {
	if len(s.Labels) > 10 {
		return fmt.Sprintf("one of the task's %d labels", len(s.Labels))
	}
	q := make([]string, len(s.Labels))
	for i, l := range s.Labels {
		q[i] = strconv.Quote(l)
	}
	return strings.Join(q, ", ")
}

// MatchLabel returns the task label a model's text names: the exact label, else the label equal to it
// once trimmed, else the one label equal to it ignoring case. It never guesses beyond that.
func (s Spec) MatchLabel(text string) (string, bool) {
	if slices.Contains(s.Labels, text) {
		return text, true
	}
	t := strings.TrimSpace(text)
	if slices.Contains(s.Labels, t) {
		return t, true
	}
	found, n := "", 0
	for _, l := range s.Labels {
		if strings.EqualFold(l, t) {
			found, n = l, n+1
		}
	}
	return found, n == 1
}

// Label reads a model's label: a string naming a task label (see MatchLabel), or a number whose text
// is one (servers answer 0 for the label "0").
func (s Spec) Label(v any) (string, error) {
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case float64:
		text = strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return "", Invalidf("no %s in the answer", s.LabelField)
	default:
		return "", Invalidf("%s is %s, want a string", s.LabelField, TypeName(v))
	}
	l, ok := s.MatchLabel(text)
	if !ok {
		return "", Invalidf("%s %s is not one of %s", s.LabelField, Quote(text), s.LabelList())
	}
	return l, nil
}

// Number reads a number a model gave as a JSON number or as a numeric string ("0.8"), as some real
// servers do. Garbage, NaN and infinities are errors.
func Number(v any) (float64, error) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case string:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
			return 0, fmt.Errorf("%s is not a number", Quote(x))
		}
	default:
		return 0, fmt.Errorf("%s is not a number", TypeName(v))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%v is not a finite number", f)
	}
	return f, nil
}

// Unit reads a probability: a Number in [0, 1], allowing the rounding slack the task config allows.
func Unit(v any) (float64, error) {
	const eps = 1e-4
	f, err := Number(v)
	if err != nil {
		return 0, err
	}
	if f < -eps || f > 1+eps {
		return 0, fmt.Errorf("%v is outside [0, 1]", f)
	}
	return min(max(f, 0), 1), nil
}

// Probs reads a model's probability mapping over the task labels. Keys are matched like labels;
// values are Units. A label the model leaves out gets 0, a key that is no label is an error. The
// result is not normalised: the platform rescales a mapping that does not sum to 1.
func (s Spec) Probs(v any) (map[string]float64, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Invalidf("%s is %s, want a mapping from each label to its probability", s.ProbField, TypeName(v))
	}
	probs := make(map[string]float64, len(s.Labels))
	for _, l := range s.Labels {
		probs[l] = 0
	}
	var sum float64
	for key, raw := range m {
		l, ok := s.MatchLabel(key)
		if !ok {
			return nil, Invalidf("%s has the key %s, which is not one of %s", s.ProbField, Quote(key), s.LabelList())
		}
		p, err := Unit(raw)
		if err != nil {
			return nil, Invalidf("%s[%s]: %v", s.ProbField, strconv.Quote(l), err)
		}
		probs[l] += p
		sum += p
	}
	if sum == 0 {
		return nil, Invalidf("%s: all probabilities are zero", s.ProbField)
	}
	return probs, nil
}

// Normalise returns probs rescaled to sum to 1 (nil when they sum to 0).
func Normalise(probs map[string]float64) map[string]float64 {
	var sum float64
	for _, p := range probs {
		sum += p
	}
	if sum <= 0 {
		return nil
	}
	out := make(map[string]float64, len(probs))
	for l, p := range probs {
		out[l] = p / sum
	}
	return out
}

// ProbValue renders probabilities as the JSON-shaped value an output map holds.
func ProbValue(probs map[string]float64) map[string]any {
	out := make(map[string]any, len(probs))
	for l, p := range probs {
		out[l] = p
	}
	return out
}

// Argmax returns the label with the highest probability, ties going to the earlier task label.
func (s Spec) Argmax(probs map[string]float64) string {
	best, bestP := "", math.Inf(-1)
	for _, l := range s.Labels {
		if p, ok := probs[l]; ok && p > bestP {
			best, bestP = l, p
		}
	}
	return best
}

// Check reads a model's answer object against the spec and returns a copy with the answer fields
// cleaned (label canonicalised, probabilities and confidence as float64) and every other key kept,
// so the platform's own output check sees everything the model said. Errors are invalid_answer.
func (s Spec) Check(out map[string]any) (map[string]any, error) {
	if out == nil {
		return nil, Invalidf("the answer is null, want a JSON object")
	}
	clean := make(map[string]any, len(out))
	for k, v := range out {
		clean[k] = v
	}
	if err := s.Clean(clean); err != nil {
		return nil, err
	}
	return clean, nil
}

// Clean is Check in place, for an answer the caller owns (one it just decoded): the common case of
// an answer that is already clean allocates nothing.
func (s Spec) Clean(out map[string]any) error {
	if out == nil {
		return Invalidf("the answer is null, want a JSON object")
	}
	switch s.Kind {
	case Classification:
		return s.checkClassification(out)
	case ExtractiveQA:
		return s.checkQA(out)
	}
	if v, ok := out[s.LabelField]; s.LabelField != "" && (!ok || v == nil) {
		return Invalidf("no %s in the answer", s.LabelField)
	}
	return nil
}

func (s Spec) checkClassification(out map[string]any) error {
	l, err := s.Label(out[s.LabelField])
	if err != nil {
		return err
	}
	out[s.LabelField] = l
	if v, ok := out[s.ProbField]; ok && v != nil && s.ProbField != "" {
		if s.cleanProbs(v) {
			return nil
		}
		probs, err := s.Probs(v)
		if err != nil {
			return err
		}
		out[s.ProbField] = ProbValue(probs)
	}
	return nil
}

// cleanProbs reports whether v is already a clean prob mapping: every label once, as itself, with
// a float64 in [0, 1], not all zero. Most answers are, and keeping them saves three maps.
func (s Spec) cleanProbs(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != len(s.Labels) {
		return false
	}
	sum := 0.0
	for _, l := range s.Labels {
		p, ok := m[l].(float64)
		if !ok || !(p >= 0 && p <= 1) {
			return false
		}
		sum += p
	}
	return sum > 0
}

func (s Spec) checkQA(out map[string]any) error {
	a, err := s.Answer(out[s.AnswerField])
	if err != nil {
		return err
	}
	out[s.AnswerField] = a
	if v, ok := out[s.ConfField]; ok && v != nil && s.ConfField != "" {
		c, err := Unit(v)
		if err != nil {
			return Invalidf("%s: %v", s.ConfField, err)
		}
		out[s.ConfField] = c
	}
	return nil
}

// Answer reads a QA answer: a string (possibly empty: "no answer" is an answer).
func (s Spec) Answer(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case nil:
		return "", Invalidf("no %s in the answer", s.AnswerField)
	}
	return "", Invalidf("%s is %s, want a string", s.AnswerField, TypeName(v))
}

// TypeName names a JSON value's type for a message ("a list", "an object"), never echoing the value.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

// Text renders an input value as the text a model server is sent: strings as they are, nil as "",
// anything else as its JSON.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}
