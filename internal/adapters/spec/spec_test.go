package spec_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

var nli = spec.Spec{Kind: spec.Classification, Labels: []string{"entailed", "neutral", "contradictory"},
	LabelField: "label", ProbField: "prob"}

var qa = spec.Spec{Kind: spec.ExtractiveQA, AnswerField: "answer", ConfField: "conf", ContextField: "context", QuestionField: "question"}

func TestCheck(t *testing.T) {
	t.Parallel()
	digits := spec.Spec{Kind: spec.Classification, Labels: []string{"0", "1"}, LabelField: "label"}
	tests := []struct {
		name    string
		spec    spec.Spec
		in      map[string]any
		want    map[string]any
		problem string
	}{
		{name: "plain", spec: nli, in: map[string]any{"label": "neutral", "prob": map[string]any{"entailed": 0.1, "neutral": 0.8, "contradictory": 0.1}, "id": "u1"},
			want: map[string]any{"label": "neutral", "prob": map[string]any{"entailed": 0.1, "neutral": 0.8, "contradictory": 0.1}, "id": "u1"}},
		{name: "case and space", spec: nli, in: map[string]any{"label": " Neutral "}, want: map[string]any{"label": "neutral"}},
		{name: "numeric strings, missing label, not summing to 1", spec: nli,
			in:   map[string]any{"label": "entailed", "prob": map[string]any{"Entailed": "0.5", "neutral": " 0.25"}},
			want: map[string]any{"label": "entailed", "prob": map[string]any{"entailed": 0.5, "neutral": 0.25, "contradictory": 0.0}}},
		{name: "number label", spec: digits, in: map[string]any{"label": 1.0}, want: map[string]any{"label": "1"}},
		{name: "label outside the set", spec: nli, in: map[string]any{"label": "maybe"}, problem: `label "maybe" is not one of "entailed", "neutral", "contradictory"`},
		{name: "no label", spec: nli, in: map[string]any{"prob": map[string]any{}}, problem: "no label in the answer"},
		{name: "label a list", spec: nli, in: map[string]any{"label": []any{"neutral"}}, problem: "label is a list"},
		{name: "prob garbage", spec: nli, in: map[string]any{"label": "neutral", "prob": map[string]any{"neutral": "high"}}, problem: `"high" is not a number`},
		{name: "prob out of range", spec: nli, in: map[string]any{"label": "neutral", "prob": map[string]any{"neutral": 3.0}}, problem: "outside [0, 1]"},
		{name: "prob unknown key", spec: nli, in: map[string]any{"label": "neutral", "prob": map[string]any{"other": 1.0}}, problem: `key "other"`},
		{name: "prob all zero", spec: nli, in: map[string]any{"label": "neutral", "prob": map[string]any{"neutral": 0.0}}, problem: "all probabilities are zero"},
		{name: "prob a list", spec: nli, in: map[string]any{"label": "neutral", "prob": []any{0.2}}, problem: "prob is a list"},
		{name: "qa", spec: qa, in: map[string]any{"answer": "Paris", "conf": "0.9"}, want: map[string]any{"answer": "Paris", "conf": 0.9}},
		{name: "qa empty answer", spec: qa, in: map[string]any{"answer": ""}, want: map[string]any{"answer": ""}},
		{name: "qa answer a number", spec: qa, in: map[string]any{"answer": 3.0}, problem: "answer is a number"},
		{name: "qa conf NaN-ish", spec: qa, in: map[string]any{"answer": "x", "conf": "NaN"}, problem: "not a finite number"},
		{name: "other kind passes through", spec: spec.Spec{LabelField: "tags"}, in: map[string]any{"tags": []any{"a"}}, want: map[string]any{"tags": []any{"a"}}},
		{name: "other kind needs the field", spec: spec.Spec{LabelField: "tags"}, in: map[string]any{}, problem: "no tags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.spec.Check(tt.in)
			if tt.problem != "" {
				me, ok := err.(*dynabench.ModelError)
				if !ok || me.Kind != dynabench.ModelInvalidAnswer || !strings.Contains(err.Error(), tt.problem) {
					t.Fatalf("error %v, want invalid_answer with %q", err, tt.problem)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Check = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestCheckDoesNotTouchItsInput(t *testing.T) {
	t.Parallel()
	in := map[string]any{"label": " neutral"}
	if _, err := nli.Check(in); err != nil || in["label"] != " neutral" {
		t.Errorf("input changed: %v, %v", in, err)
	}
}

func TestMatchLabelIsUnambiguous(t *testing.T) {
	t.Parallel()
	s := spec.Spec{Labels: []string{"Yes", "yes", "no"}}
	if l, ok := s.MatchLabel("yes"); !ok || l != "yes" {
		t.Errorf("exact match: %q %v", l, ok)
	}
	if _, ok := s.MatchLabel("YES"); ok {
		t.Error("YES matches two labels ignoring case: it must not match")
	}
}

func TestQuoteAndArgmax(t *testing.T) {
	t.Parallel()
	if q := spec.Quote(strings.Repeat("é", 100)); len(q) > 70 || !strings.HasSuffix(q, `…"`) {
		t.Errorf("Quote = %s", q)
	}
	if l := nli.Argmax(map[string]float64{"entailed": 0.4, "neutral": 0.4, "contradictory": 0.2}); l != "entailed" {
		t.Errorf("Argmax tie = %s, want the earlier label", l)
	}
	if n := spec.Normalise(map[string]float64{"a": 0, "b": 0}); n != nil {
		t.Errorf("Normalise zeros = %v", n)
	}
}
