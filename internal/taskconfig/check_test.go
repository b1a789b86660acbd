package taskconfig

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// multilabelConfig has a multilabel target and an image context.
const multilabelConfig = `
context:
- {name: image, type: image}
- {name: caption, type: string}
input:
- {name: tags, type: multilabel, labels: [cat, dog, bird]}
output:
- name: tags
perf_metric: {type: dataperf_f1, reference_name: tags}
model_wrong_metric: {type: exact_match, reference_names: [tags]}
`

// problemsAre compares problems with "path: message" strings (message may
// be a prefix), order included.
func problemsAre(t *testing.T, got []Problem, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d problems %v, want %v", len(got), got, want)
		return
	}
	for i, p := range got {
		if !strings.HasPrefix(p.String(), want[i]) {
			t.Errorf("problem %d = %q, want %q…", i, p.String(), want[i])
		}
	}
}

func TestCheckContext(t *testing.T) {
	t.Parallel()
	nli := mustParse(t, fixture(t, "nli_task_config.yaml"))
	ml := mustParse(t, []byte(multilabelConfig))
	tests := []struct {
		name string
		cfg  *Config
		ctx  map[string]any
		lim  Limits
		want []string
	}{
		{"ok", nli, map[string]any{"context": "A man sleeps.", "extra": 1}, Limits{}, nil},
		{"empty text is allowed", nli, map[string]any{"context": ""}, Limits{}, nil},
		{"missing", nli, map[string]any{}, Limits{}, []string{"context.context: required"}},
		{"null", nli, map[string]any{"context": nil}, Limits{}, []string{"context.context: required"}},
		{"wrong type", nli, map[string]any{"context": 3}, Limits{}, []string{"context.context: must be a string"}},
		{"invalid UTF-8", nli, map[string]any{"context": "a\xffb"}, Limits{}, []string{"context.context: not valid UTF-8"}},
		{"too long", nli, map[string]any{"context": "12345"}, Limits{MaxFieldBytes: 4}, []string{"context.context: too long (5 bytes, at most 4)"}},
		{"default limit", nli, map[string]any{"context": strings.Repeat("x", 10001)}, Limits{}, []string{"context.context: too long"}},
		{"every field", ml, map[string]any{"image": []any{"x"}}, Limits{}, []string{"context.image: must be a string", "context.caption: required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			problemsAre(t, tt.cfg.CheckContext(tt.ctx, tt.lim), tt.want...)
		})
	}
}

func TestCheckInput(t *testing.T) {
	t.Parallel()
	nli := mustParse(t, fixture(t, "nli_task_config.yaml"))
	qa := mustParse(t, fixture(t, "qa_task_config.yaml"))
	ml := mustParse(t, []byte(multilabelConfig))
	ctx := map[string]any{"context": "The cat sat on the mat."}
	tests := []struct {
		name  string
		cfg   *Config
		input map[string]any
		lim   Limits
		want  []string
	}{
		{"nli ok", nli, map[string]any{"hypothesis": "A cat sits.", "label": "entailed"}, Limits{}, nil},
		{"label trimmed", nli, map[string]any{"hypothesis": "A cat sits.", "label": " neutral "}, Limits{}, nil},
		{"all missing", nli, map[string]any{}, Limits{}, []string{"input.hypothesis: required", "input.label: required"}},
		{"blank string", nli, map[string]any{"hypothesis": "  \n", "label": "entailed"}, Limits{}, []string{"input.hypothesis: required"}},
		{"bad label", nli, map[string]any{"hypothesis": "h", "label": "maybe"}, Limits{}, []string{`input.label: "maybe" is not one of "entailed", "neutral", "contradictory"`}},
		{"label not scalar", nli, map[string]any{"hypothesis": "h", "label": []any{"entailed"}}, Limits{}, []string{"input.label: must be one of"}},
		{"hypothesis not a string", nli, map[string]any{"hypothesis": 42, "label": "entailed"}, Limits{}, []string{"input.hypothesis: must be a string"}},
		{"too long", nli, map[string]any{"hypothesis": "abcdef", "label": "entailed"}, Limits{MaxFieldBytes: 5}, []string{"input.hypothesis: too long (6 bytes, at most 5)"}},
		{"invalid UTF-8", nli, map[string]any{"hypothesis": "\xc3\x28", "label": "entailed"}, Limits{}, []string{"input.hypothesis: not valid UTF-8"}},
		{"unknown fields", nli, map[string]any{"hypothesis": "h", "label": "entailed", "zeta": 1, "alpha": 2}, Limits{},
			[]string{"input.alpha: unknown field", "input.zeta: unknown field"}},
		{"qa ok", qa, map[string]any{"question": "Who sat?", "answer": "The cat"}, Limits{}, nil},
		{"qa selection trimmed", qa, map[string]any{"question": "Who sat?", "answer": " the mat "}, Limits{}, nil},
		{"qa not in context", qa, map[string]any{"question": "Who sat?", "answer": "the dog"}, Limits{},
			[]string{`input.answer: not found in the context field "context"`}},
		{"qa empty selection", qa, map[string]any{"question": "Who sat?", "answer": ""}, Limits{}, []string{"input.answer: required"}},
		{"multilabel ok", ml, map[string]any{"tags": []any{"cat", "dog"}}, Limits{}, nil},
		{"multilabel empty", ml, map[string]any{"tags": []any{}}, Limits{}, []string{"input.tags: required"}},
		{"multilabel not a list", ml, map[string]any{"tags": "cat"}, Limits{}, []string{"input.tags: must be a list of labels"}},
		{"multilabel bad and duplicate", ml, map[string]any{"tags": []any{"cat", "fish", "cat"}}, Limits{},
			[]string{`input.tags[1]: "fish" is not one of`, `input.tags[2]: duplicate label "cat"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			problemsAre(t, tt.cfg.CheckInput(ctx, tt.input, tt.lim), tt.want...)
		})
	}
}

func TestCheckInputWithoutContext(t *testing.T) {
	t.Parallel()
	qa := mustParse(t, fixture(t, "qa_task_config.yaml"))
	problemsAre(t, qa.CheckInput(nil, map[string]any{"question": "q", "answer": "a"}, Limits{}),
		`input.answer: the context has no text "context" to select from`)
}

func TestCheckOutput(t *testing.T) {
	t.Parallel()
	nli := mustParse(t, fixture(t, "nli_task_config.yaml"))
	qa := mustParse(t, fixture(t, "qa_task_config.yaml"))
	ml := mustParse(t, []byte(multilabelConfig))
	ctx := map[string]any{"context": "The cat sat on the mat."}
	probs := func(e, n, c any) map[string]any {
		return map[string]any{"entailed": e, "neutral": n, "contradictory": c}
	}
	tests := []struct {
		name   string
		cfg    *Config
		output string // JSON, decoded as an HTTP client would
		clean  map[string]any
		want   []string
	}{
		{"nli ok", nli, `{"label": "neutral", "prob": {"entailed": 0.2, "neutral": 0.5, "contradictory": 0.3}, "id": "x"}`,
			map[string]any{"label": "neutral", "prob": probs(0.2, 0.5, 0.3)}, nil},
		{"label only", nli, `{"label": "entailed"}`, map[string]any{"label": "entailed"}, nil},
		{"label missing", nli, `{"prob": {"entailed": 1, "neutral": 0, "contradictory": 0}}`,
			map[string]any{"prob": probs(1.0, 0.0, 0.0)}, []string{"output.label: required"}},
		{"bad label", nli, `{"label": "yes"}`, map[string]any{"label": "yes"}, []string{`output.label: "yes" is not one of`}},
		{"prob above 1", nli, `{"label": "neutral", "prob": {"entailed": 2, "neutral": 0, "contradictory": 2}}`, nil,
			[]string{"output.prob.contradictory: must be a number in [0, 1]", "output.prob.entailed: must be a number in [0, 1]"}},
		{"prob rescaled", nli, `{"label": "neutral", "prob": {"entailed": 0.1, "neutral": 0.2, "contradictory": 0.2}}`,
			map[string]any{"label": "neutral", "prob": probs(0.2, 0.4, 0.4)}, nil},
		{"prob all zero", nli, `{"label": "neutral", "prob": {"entailed": 0, "neutral": 0, "contradictory": 0}}`, nil,
			[]string{"output.prob: all probabilities are zero"}},
		{"prob wrong labels", nli, `{"label": "neutral", "prob": {"entailed": 0.5, "neutral": 0.5, "maybe": 0}}`, nil,
			[]string{"output.prob.maybe: not a label of this task", `output.prob: missing the label "contradictory"`}},
		{"prob not a number", nli, `{"label": "neutral", "prob": {"entailed": "0.5", "neutral": 0.5, "contradictory": 0}}`, nil,
			[]string{"output.prob.entailed: must be a number in [0, 1]"}},
		{"prob not a map", nli, `{"label": "neutral", "prob": 0.5}`, nil, []string{"output.prob: must be a mapping"}},
		{"qa ok", qa, `{"answer": "on the mat", "conf": 0.75}`, map[string]any{"answer": "on the mat", "conf": 0.75}, nil},
		{"qa answer need not be in context", qa, `{"answer": "in a hat"}`, map[string]any{"answer": "in a hat"}, nil},
		{"qa answer not a string", qa, `{"answer": 3}`, nil, []string{"output.answer: must be a string"}},
		{"qa conf out of range", qa, `{"answer": "x", "conf": 1.2}`, nil, []string{"output.conf: must be a number in [0, 1]"}},
		{"qa conf rounding slack", qa, `{"answer": "x", "conf": 1.00001}`, map[string]any{"answer": "x", "conf": 1.0}, nil},
		{"multilabel", ml, `{"tags": ["dog", "cat"]}`, map[string]any{"tags": []any{"dog", "cat"}}, nil},
		{"multilabel bad", ml, `{"tags": ["cow"]}`, nil, []string{`output.tags[0]: "cow" is not one of`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var output map[string]any
			if err := json.Unmarshal([]byte(tt.output), &output); err != nil {
				t.Fatal(err)
			}
			clean, ps := tt.cfg.CheckOutput(ctx, output)
			problemsAre(t, ps, tt.want...)
			if tt.clean != nil && !sameValues(clean, tt.clean) {
				t.Errorf("clean = %v, want %v", clean, tt.clean)
			}
		})
	}
}

// sameValues compares decoded values, numbers within 1e-9.
func sameValues(a, b any) bool {
	fa, okA := toFloat(a)
	fb, okB := toFloat(b)
	if okA && okB {
		return math.Abs(fa-fb) < 1e-9
	}
	ma, okA := a.(map[string]any)
	mb, okB := b.(map[string]any)
	if okA && okB {
		if len(ma) != len(mb) {
			return false
		}
		for k := range ma {
			if !sameValues(ma[k], mb[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// CheckOutput accepts the numeric types Go callers and decoders produce.
func TestCheckOutputNumberTypes(t *testing.T) {
	t.Parallel()
	nli := mustParse(t, fixture(t, "nli_task_config.yaml"))
	for _, p := range []map[string]any{
		{"entailed": 1, "neutral": int64(0), "contradictory": uint8(0)},
		{"entailed": json.Number("1"), "neutral": float32(0), "contradictory": 0.0},
	} {
		if _, ps := nli.CheckOutput(nil, map[string]any{"label": "entailed", "prob": p}); len(ps) != 0 {
			t.Errorf("%v: %v", p, ps)
		}
	}
	if _, ps := nli.CheckOutput(nil, map[string]any{"label": "entailed", "prob": map[string]float64{
		"entailed": math.NaN(), "neutral": 0, "contradictory": 0}}); len(ps) != 1 {
		t.Errorf("NaN must be rejected, got %v", ps)
	}
}

func TestModelWrong(t *testing.T) {
	t.Parallel()
	nli := mustParse(t, fixture(t, "nli_task_config.yaml"))
	qa := mustParse(t, fixture(t, "qa_task_config.yaml"))
	ml := mustParse(t, []byte(multilabelConfig))
	ask := mustParse(t, []byte(strings.Replace(baseConfig, "model_wrong_metric: {type: exact_match, reference_names: [label]}", "model_wrong_metric: {type: ask_user}", 1)))
	yes, no := true, false
	tests := []struct {
		name          string
		cfg           *Config
		input, output map[string]any
		want          *bool
	}{
		{"nli fooled", nli, map[string]any{"label": "entailed"}, map[string]any{"label": "neutral"}, &yes},
		{"nli not fooled", nli, map[string]any{"label": "entailed"}, map[string]any{"label": "entailed"}, &no},
		{"nli trims", nli, map[string]any{"label": "entailed "}, map[string]any{"label": " entailed"}, &no},
		{"nli output missing", nli, map[string]any{"label": "entailed"}, map[string]any{}, &yes},
		{"nli output null", nli, map[string]any{"label": "entailed"}, map[string]any{"label": nil}, &yes},
		{"nli input missing", nli, map[string]any{}, map[string]any{"label": "entailed"}, nil},
		{"numbers compare as text", nli, map[string]any{"label": "1"}, map[string]any{"label": 1.0}, &no},
		{"qa F1 0.8 not fooled", qa, map[string]any{"answer": "a cat sat down"}, map[string]any{"answer": "the cat sat"}, &no},
		{"qa F1 0 fooled", qa, map[string]any{"answer": "the cat"}, map[string]any{"answer": "a dog"}, &yes},
		{"qa F1 just below threshold", qa, map[string]any{"answer": "one two three four five six"}, map[string]any{"answer": "one two xx yy zz"}, &yes},
		{"qa F1 exactly threshold", qa, map[string]any{"answer": "one two three four five"}, map[string]any{"answer": "one two x y z"}, &no},
		{"qa output missing", qa, map[string]any{"answer": "the cat"}, map[string]any{}, &yes},
		{"qa output not a string", qa, map[string]any{"answer": "3"}, map[string]any{"answer": 3}, &yes},
		{"qa list of answers", qa, map[string]any{"answer": []any{"the dog", "a cat"}}, map[string]any{"answer": "cat"}, &no},
		{"multilabel same set", ml, map[string]any{"tags": []any{"cat", "dog"}}, map[string]any{"tags": []any{"dog", "cat"}}, &no},
		{"multilabel different", ml, map[string]any{"tags": []any{"cat", "dog"}}, map[string]any{"tags": []any{"cat"}}, &yes},
		{"multilabel not a list", ml, map[string]any{"tags": []any{"cat"}}, map[string]any{"tags": "cat"}, &yes},
		{"ask_user", ask, map[string]any{"label": "entailed"}, map[string]any{"label": "neutral"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.cfg.ModelWrong(tt.input, tt.output)
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("ModelWrong = %v, want %v", show(got), show(tt.want))
			}
		})
	}
}

func show(b *bool) string {
	if b == nil {
		return "nil"
	}
	if *b {
		return "true"
	}
	return "false"
}

func TestCheckCreateMetadata(t *testing.T) {
	t.Parallel()
	nli := mustParse(t, fixture(t, "nli_task_config.yaml"))
	yes, no := true, false
	tests := []struct {
		name       string
		meta       map[string]any
		modelWrong *bool
		lim        Limits
		want       []string
	}{
		{"ok fooled", map[string]any{"example_explanation": "x", "model_explanation_wrong": "y"}, &yes, Limits{}, nil},
		{"ok not fooled", map[string]any{"model_explanation_right": "y"}, &no, Limits{}, nil},
		{"unknown model_wrong allows both", map[string]any{"model_explanation_right": "y", "model_explanation_wrong": "z"}, nil, Limits{}, nil},
		{"empty and null are fine", map[string]any{"example_explanation": "", "model_explanation_wrong": nil}, &no, Limits{}, nil},
		{"not asked when fooled", map[string]any{"model_explanation_right": "y"}, &yes, Limits{},
			[]string{"metadata.model_explanation_right: not asked when the model was fooled"}},
		{"not asked when not fooled", map[string]any{"model_explanation_wrong": "y"}, &no, Limits{},
			[]string{"metadata.model_explanation_wrong: not asked when the model was not fooled"}},
		{"unknown", map[string]any{"corrected_label": "entailed"}, nil, Limits{}, []string{"metadata.corrected_label: unknown field"}},
		{"too long", map[string]any{"example_explanation": "abcdef"}, nil, Limits{MaxFieldBytes: 3},
			[]string{"metadata.example_explanation: too long"}},
		{"not a string", map[string]any{"example_explanation": map[string]any{}}, nil, Limits{},
			[]string{"metadata.example_explanation: must be a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			problemsAre(t, nli.CheckCreateMetadata(tt.meta, tt.modelWrong, tt.lim), tt.want...)
		})
	}
}

func TestCheckValidateMetadata(t *testing.T) {
	t.Parallel()
	nli := mustParse(t, fixture(t, "nli_task_config.yaml"))
	qa := mustParse(t, fixture(t, "qa_task_config.yaml"))
	sentiment := mustParse(t, fixture(t, "old_sentiment_task_config.yaml"))
	ctx := map[string]any{"context": "The cat sat on the mat."}
	tests := []struct {
		name  string
		cfg   *Config
		label string
		meta  map[string]any
		want  []string
	}{
		{"incorrect with correction", nli, "incorrect", map[string]any{"corrected_label": "neutral", "target_explanation": "because"}, nil},
		{"correct", nli, "correct", map[string]any{"validator_example_explanation": "fine", "validator_model_explanation": "x"}, nil},
		{"flagged", nli, "flagged", map[string]any{"flag_reason": "spam"}, nil},
		{"correction when correct", nli, "correct", map[string]any{"corrected_label": "neutral"},
			[]string{`metadata.corrected_label: only asked when the example is validated "incorrect"`}},
		{"bad correction", nli, "incorrect", map[string]any{"corrected_label": "maybe"},
			[]string{`metadata.corrected_label: "maybe" is not one of`}},
		{"unknown", nli, "correct", map[string]any{"why": "x"}, []string{"metadata.why: unknown field"}},
		{"bad validation label", nli, "wrong", nil, []string{`label: "wrong" is not one of correct, incorrect, flagged`}},
		{"qa correction in context", qa, "incorrect", map[string]any{"corrected_answer": "the mat"}, nil},
		{"qa correction not in context", qa, "incorrect", map[string]any{"corrected_answer": "the hat"},
			[]string{`metadata.corrected_answer: not found in the context field "context"`}},
		// Dynabench's sentiment config lists "entailed" instead of
		// "neutral" for corrections; the config is imported as written.
		{"sentiment typo kept", sentiment, "incorrect", map[string]any{"corrected_label": "entailed"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			problemsAre(t, tt.cfg.CheckValidateMetadata(ctx, tt.label, tt.meta, Limits{}), tt.want...)
		})
	}
}
