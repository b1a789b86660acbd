package taskconfig

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// baseConfig is a small valid v1 config that the broken-config tests edit.
const baseConfig = `
context:
- {name: context, type: string}
input:
- {name: hypothesis, type: string}
- {name: label, type: multiclass, labels: [entailed, neutral, contradictory]}
output:
- name: label
- {name: prob, type: prob, reference_name: label}
model_wrong_metric: {type: exact_match, reference_names: [label]}
perf_metric: {type: accuracy, reference_name: label}
delta_metrics: [{type: fairness}]
aggregation_metric: {type: dynascore, default_weights: {accuracy: 4, fairness: 1, examples_per_second: 0.5}}
metadata:
  create:
  - {name: why, type: string, model_wrong_condition: true}
  validate:
  - {name: corrected_label, type: multiclass, labels: [entailed, neutral, contradictory], validated_label_condition: incorrect}
`

// edited returns baseConfig as YAML after edit changed its decoded form.
func edited(t *testing.T, edit func(doc map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(baseConfig), &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// item returns the i-th object of a list under key (or under a nested
// mapping when key is "a.b").
func item(doc map[string]any, key string, i int) map[string]any {
	var v any = doc
	for _, k := range strings.Split(key, ".") {
		v = v.(map[string]any)[k]
	}
	return v.([]any)[i].(map[string]any)
}

func TestBaseConfigIsValid(t *testing.T) {
	t.Parallel()
	cfg, rep := Parse([]byte(baseConfig))
	if cfg == nil || len(rep.Problems) != 0 || len(rep.Warnings) != 0 {
		t.Fatalf("base config: %v %v", rep.Problems, rep.Warnings)
	}
	want := map[string]float64{"accuracy": 4, "fairness": 1, "examples_per_second": 0.5}
	if !reflect.DeepEqual(cfg.Aggregation.DefaultWeights, want) {
		t.Errorf("DefaultWeights = %v, want %v", cfg.Aggregation.DefaultWeights, want)
	}
}

func TestBrokenConfigs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		edit    func(doc map[string]any)
		path    string
		message string // substring of the message
	}{
		{"prob reference typo", func(d map[string]any) { item(d, "output", 1)["reference_name"] = "labl" },
			"output[1].reference_name", `no field named "labl"`},
		{"prob reference not multiclass", func(d map[string]any) { item(d, "output", 1)["reference_name"] = "hypothesis" },
			"output[1].reference_name", `"hypothesis" is of type string; a prob must refer to a multiclass field`},
		{"prob without reference", func(d map[string]any) { delete(item(d, "output", 1), "reference_name") },
			"output[1].reference_name", "required for prob (or set single_prob: true)"},
		{"abbreviated output unknown", func(d map[string]any) { item(d, "output", 0)["name"] = "labl" },
			"output[0].name", `no input or context field named "labl"`},
		{"output type conflicts with input", func(d map[string]any) { item(d, "output", 0)["type"] = "string" },
			"output[0].type", `"string", but the field "label" is declared multiclass`},
		{"output empty", func(d map[string]any) { d["output"] = []any{} },
			"output", "must not be empty"},
		{"perf_metric missing", func(d map[string]any) { delete(d, "perf_metric") },
			"perf_metric", "required"},
		{"perf_metric type", func(d map[string]any) { d["perf_metric"].(map[string]any)["type"] = "f2" },
			"perf_metric.type", `unknown type "f2"`},
		{"perf_metric reference", func(d map[string]any) { d["perf_metric"].(map[string]any)["reference_name"] = "hypothesis" },
			"perf_metric.reference_name", `no output field named "hypothesis"`},
		{"perf_metric list", func(d map[string]any) {
			d["perf_metric"] = []any{map[string]any{"type": "accuracy", "reference_name": "label"}, map[string]any{"type": "rouge", "reference_name": "label"}}
		}, "perf_metric[1].type", `unknown type "rouge"`},
		{"perf_metric scalar", func(d map[string]any) { d["perf_metric"] = "accuracy" },
			"perf_metric", "must be a mapping {type, reference_name}"},
		{"model_wrong type", func(d map[string]any) { d["model_wrong_metric"].(map[string]any)["type"] = "bleu" },
			"model_wrong_metric.type", `unknown type "bleu" (want exact_match, string_f1 or ask_user)`},
		{"model_wrong reference not a target", func(d map[string]any) {
			d["model_wrong_metric"].(map[string]any)["reference_names"] = []any{"hypothesis"}
		}, "model_wrong_metric.reference_names[0]", `no target field named "hypothesis"`},
		{"exact_match without references", func(d map[string]any) { delete(d["model_wrong_metric"].(map[string]any), "reference_names") },
			"model_wrong_metric.reference_names", "required for exact_match"},
		{"string_f1 without threshold", func(d map[string]any) {
			d["model_wrong_metric"] = map[string]any{"type": "string_f1", "reference_name": "label"}
		}, "model_wrong_metric.threshold", "required for string_f1"},
		{"string_f1 threshold out of range", func(d map[string]any) {
			d["model_wrong_metric"] = map[string]any{"type": "string_f1", "reference_name": "label", "threshold": 1.5}
		}, "model_wrong_metric.threshold", "must be a number in [0, 1]"},
		{"string_f1 reference not a target", func(d map[string]any) {
			d["model_wrong_metric"] = map[string]any{"type": "string_f1", "reference_name": "context", "threshold": 0.4}
		}, "model_wrong_metric.reference_name", `no target field named "context"`},
		{"selection reference missing", func(d map[string]any) {
			d["input"] = append(d["input"].([]any), map[string]any{"name": "answer", "type": "context_string_selection", "reference_name": "passage"})
		}, "input[2].reference_name", `no context field named "passage"`},
		{"selection reference not a string", func(d map[string]any) {
			item(d, "context", 0)["type"] = "image"
			d["input"] = append(d["input"].([]any), map[string]any{"name": "answer", "type": "context_string_selection", "reference_name": "context"})
		}, "input[2].reference_name", `context field "context" is of type image`},
		{"selection without reference", func(d map[string]any) {
			d["input"] = append(d["input"].([]any), map[string]any{"name": "answer", "type": "context_string_selection"})
		}, "input[2].reference_name", "required for context_string_selection"},
		{"duplicate input", func(d map[string]any) { item(d, "input", 1)["name"] = "hypothesis" },
			"input[1].name", `duplicate field name "hypothesis"`},
		{"input named like context", func(d map[string]any) { item(d, "input", 0)["name"] = "context" },
			"input[0].name", `duplicate field name "context" (already a context field)`},
		{"duplicate metadata", func(d map[string]any) {
			m := d["metadata"].(map[string]any)
			m["create"] = append(m["create"].([]any), map[string]any{"name": "why", "type": "string"})
		}, "metadata.create[1].name", `duplicate field name "why"`},
		{"unknown field type", func(d map[string]any) { item(d, "input", 0)["type"] = "text" },
			"input[0].type", `unknown type "text"`},
		{"missing type", func(d map[string]any) { delete(item(d, "input", 0), "type") },
			"input[0].type", "required"},
		{"missing name", func(d map[string]any) { delete(item(d, "input", 0), "name") },
			"input[0].name", "required"},
		{"field not a mapping", func(d map[string]any) { d["input"].([]any)[0] = "hypothesis" },
			"input[0]", "must be a mapping"},
		{"prob in input", func(d map[string]any) {
			d["input"] = append(d["input"].([]any), map[string]any{"name": "p", "type": "prob", "single_prob": true})
		}, "input[2].type", "cannot be used in input"},
		{"labels empty", func(d map[string]any) { item(d, "input", 1)["labels"] = []any{} },
			"input[1].labels", "must not be empty"},
		{"labels missing", func(d map[string]any) { delete(item(d, "input", 1), "labels") },
			"input[1].labels", "required for multiclass"},
		{"labels duplicate", func(d map[string]any) { item(d, "input", 1)["labels"] = []any{"a", "a"} },
			"input[1].labels[1]", `duplicate label "a"`},
		{"labels not a list", func(d map[string]any) { item(d, "input", 1)["labels"] = "a,b" },
			"input[1].labels", "must be a list of labels"},
		{"label not a string", func(d map[string]any) { item(d, "input", 1)["labels"] = []any{"a", []any{"b"}} },
			"input[1].labels[1]", "must be a string"},
		{"validate labels empty", func(d map[string]any) { item(d, "metadata.validate", 0)["labels"] = []any{} },
			"metadata.validate[0].labels", "must not be empty"},
		{"delta metric type", func(d map[string]any) { d["delta_metrics"] = []any{map[string]any{"type": "speed"}} },
			"delta_metrics[0].type", `unknown delta metric "speed"`},
		{"delta metric duplicate", func(d map[string]any) {
			d["delta_metrics"] = []any{map[string]any{"type": "fairness"}, map[string]any{"type": "fairness"}}
		}, "delta_metrics[1].type", `duplicate delta metric "fairness"`},
		{"aggregation type", func(d map[string]any) { d["aggregation_metric"] = map[string]any{"type": "mean"} },
			"aggregation_metric.type", `unknown type "mean" (want dynascore)`},
		{"default weight unknown metric", func(d map[string]any) {
			d["aggregation_metric"] = map[string]any{"type": "dynascore", "default_weights": map[string]any{"speed": 1}}
		}, "aggregation_metric.default_weights.speed", "unknown metric"},
		{"default weight out of range", func(d map[string]any) {
			d["aggregation_metric"] = map[string]any{"type": "dynascore", "default_weights": map[string]any{"accuracy": 6}}
		}, "aggregation_metric.default_weights.accuracy", "must be a number between 0 and 5"},
		{"default weight not a number", func(d map[string]any) {
			d["aggregation_metric"] = map[string]any{"default_weights": map[string]any{"accuracy": "high"}}
		}, "aggregation_metric.default_weights.accuracy", "must be a number between 0 and 5"},
		{"model_wrong_condition not a bool", func(d map[string]any) { item(d, "metadata.create", 0)["model_wrong_condition"] = "maybe" },
			"metadata.create[0].model_wrong_condition", "must be true or false"},
		{"validated_label_condition", func(d map[string]any) { item(d, "metadata.validate", 0)["validated_label_condition"] = "wrong" },
			"metadata.validate[0].validated_label_condition", `"wrong" is not one of correct, incorrect, flagged`},
		{"context neither list nor mapping", func(d map[string]any) { d["context"] = "text" },
			"context", "must be a list of fields (v1) or a mapping"},
		{"no input at all", func(d map[string]any) { delete(d, "input") },
			"input", "required"},
		{"model_input unknown source", func(d map[string]any) { d["model_input"] = map[string]any{"statement": "hypotesis"} },
			"model_input.statement", `no input or context field named "hypotesis"`},
		{"model_prediction_label unknown", func(d map[string]any) { d["model_output"] = map[string]any{"model_prediction_label": "labl"} },
			"model_output.model_prediction_label", `no output field named "labl"`},
		{"goal options without field name", func(d map[string]any) {
			d["goal"] = map[string]any{"type": "multioptions", "options": []any{"a", "b"}}
		}, "goal.field_name_for_the_model", "required with options"},
		{"goal multioptions without options", func(d map[string]any) { d["goal"] = map[string]any{"type": "multioptions"} },
			"goal.options", "required for multioptions"},
		{"user_input without field name", func(d map[string]any) { d["user_input"] = []any{map[string]any{"type": "text"}} },
			"user_input[0].field_name_for_the_model", "required"},
		{"selectable-text without context slot", func(d map[string]any) {
			delete(d, "context")
			d["context"] = map[string]any{"type": "selectable-text", "field_names_for_the_model": map[string]any{"answer": "label"}}
		}, "context.field_names_for_the_model", `selectable-text needs a "context" entry`},
		{"v2 metric unknown when used", func(d map[string]any) {
			delete(d, "model_wrong_metric")
			d["model_evaluation_metric"] = map[string]any{"metric_name": "bleu"}
		}, "model_evaluation_metric.metric_name", `unknown type "bleu"`},
		{"v2 string_f1 threshold", func(d map[string]any) {
			delete(d, "model_wrong_metric")
			d["model_evaluation_metric"] = map[string]any{"metric_name": "string_f1", "metric_parameters": map[string]any{"threshold": -1}}
		}, "model_evaluation_metric.metric_parameters.threshold", "must be a number in [0, 1]"},
		{"goal_message not text", func(d map[string]any) { d["goal_message"] = []any{"a"} },
			"goal_message", "must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, rep := Parse(edited(t, tt.edit))
			if cfg == nil {
				t.Fatalf("cfg is nil; a config with problems must still be returned (%v)", rep.Problems)
			}
			if !hasProblem(rep.Problems, tt.path, tt.message) {
				t.Errorf("want problem %s: …%s…, got %v", tt.path, tt.message, rep.Problems)
			}
		})
	}
}

func hasProblem(ps []Problem, path, message string) bool {
	for _, p := range ps {
		if p.Path == path && strings.Contains(p.Message, message) {
			return true
		}
	}
	return false
}

func paths(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Path
	}
	return out
}

// Every problem is reported at once, each with its own path.
func TestBrokenConfigReportsEveryProblem(t *testing.T) {
	t.Parallel()
	src := edited(t, func(d map[string]any) {
		item(d, "output", 1)["reference_name"] = "labl"
		d["perf_metric"].(map[string]any)["type"] = "f2"
		item(d, "metadata.validate", 0)["labels"] = []any{}
		item(d, "input", 0)["type"] = "text"
		d["delta_metrics"] = []any{"speed"}
		d["aggregation_metric"] = map[string]any{"default_weights": map[string]any{"accuracy": 9}}
	})
	_, rep := Parse(src)
	want := []string{
		"input[0].type", "metadata.validate[0].labels", "perf_metric.type", "delta_metrics[0]",
		"aggregation_metric.default_weights.accuracy", "output[1].reference_name",
	}
	got := paths(rep.Problems)
	if !reflect.DeepEqual(sortedCopy(got), sortedCopy(want)) {
		t.Errorf("problems at %v, want %v\n%v", got, want, rep.Problems)
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

func TestUnusableDocuments(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	tests := []struct {
		name, src, message string
	}{
		{"syntax error", "a: [1, 2", "invalid YAML"},
		{"tab indentation", "a:\n\tb: 1", "invalid YAML"},
		{"empty", "", "the config is empty"},
		{"only a comment", "# nothing\n", "the config is empty"},
		{"null", "null", "the config is empty"},
		{"list", "- a\n- b", "must be a mapping of keys to values, not a list"},
		{"scalar", "hello", "not a single value"},
		{"too deep", "a: " + deep, "nested deeper than 64 levels"},
		{"too deep JSON", `{"a": ` + deep + `}`, "nested deeper than 64 levels"},
		{"too large", "a: " + strings.Repeat("x", MaxSourceBytes), "too large"},
		{"alias bomb", aliasBomb(), "too large (more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, rep := Parse([]byte(tt.src))
			if cfg != nil {
				t.Fatal("want a nil config for an unusable document")
			}
			if len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0].Message, tt.message) {
				t.Errorf("want %q, got %v", tt.message, rep.Problems)
			}
		})
	}
}

// aliasBomb is a "billion laughs" document: 9 levels of 9 aliases each.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestDocumentLevelProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, path, message string
	}{
		{"non-string key", baseConfig + "1: one\n", "1", `key "1" is not a string`},
		{"bool key", baseConfig + "true: yes\n", "true", "is not a string"},
		{"list key", baseConfig + "? [a]\n: b\n", "", "a key must be a string"},
		{"duplicate key", baseConfig + "goal_message: a\ngoal_message: b\n", "goal_message", "duplicate key"},
		{"bad merge", baseConfig + "x:\n  <<: 3\n", "x.<<", "must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, rep := Parse([]byte(tt.src))
			if cfg == nil {
				t.Fatalf("want a config, got problems %v", rep.Problems)
			}
			if !hasProblem(rep.Problems, tt.path, tt.message) {
				t.Errorf("want %s: %s, got %v", tt.path, tt.message, rep.Problems)
			}
		})
	}
}

func TestMergeKeysAndAliases(t *testing.T) {
	t.Parallel()
	src := `
base: &text {type: string, placeholder: Enter text}
context:
- {<<: *text, name: context}
input:
- {<<: *text, name: hypothesis, placeholder: Your hypothesis}
- {name: label, type: multiclass, labels: &labels [a, b]}
output: [{name: label}]
perf_metric: {type: accuracy, reference_name: label}
`
	cfg, rep := Parse([]byte(src))
	if !rep.OK() {
		t.Fatal(rep.Problems)
	}
	if got := strings.Join(sigs(cfg.Input), " "); got != "hypothesis:string label:multiclass[a b]" {
		t.Errorf("Input = %s", got)
	}
	if cfg.Input[0].Placeholder != "Your hypothesis" || cfg.Context[0].Placeholder != "Enter text" {
		t.Errorf("merge: explicit keys must win: %+v %+v", cfg.Input[0], cfg.Context[0])
	}
	if len(rep.Warnings) != 1 || rep.Warnings[0].Path != "base" {
		t.Errorf("want one warning for the unknown key base, got %v", rep.Warnings)
	}
}

func TestUnknownKeysAreKeptAndWarned(t *testing.T) {
	t.Parallel()
	src := edited(t, func(d map[string]any) {
		d["owner_notes"] = map[string]any{"todo": 1}
		item(d, "input", 0)["colour"] = "blue"
		d["metadata"].(map[string]any)["review"] = []any{}
		d["perf_metric"].(map[string]any)["direction"] = "up"
		// Known v2 keys we keep without interpreting: no warnings.
		for _, k := range []string{"response_fields", "required_fields", "creation_samples_title", "user_input_group_by",
			"cast_output", "external_validator", "validation_user_input", "validation_context", "validation_options",
			"evaluation", "submit_config", "leaderboard", "train_file_metric", "general_instructions"} {
			d[k] = map[string]any{"x": 1}
		}
	})
	cfg, rep := Parse(src)
	if !rep.OK() {
		t.Fatalf("unknown keys must not be problems: %v", rep.Problems)
	}
	want := []string{"owner_notes", "input[0].colour", "metadata.review", "perf_metric.direction"}
	if got := paths(rep.Warnings); !reflect.DeepEqual(sortedCopy(got), sortedCopy(want)) {
		t.Errorf("warnings at %v, want %v", got, want)
	}
	for _, w := range rep.Warnings {
		if w.Message != "unknown key, kept" {
			t.Errorf("warning %v", w)
		}
	}
	if notes, _ := cfg.Raw["owner_notes"].(map[string]any); notes["todo"] != int64(1) {
		t.Errorf("Raw lost an unknown key: %v", cfg.Raw["owner_notes"])
	}
}

// Real configs carry both model_wrong_metric and model_evaluation_metric;
// model_wrong_metric wins and a disagreement is only a warning.
func TestModelWrongMetricDialects(t *testing.T) {
	t.Parallel()
	qa := string(fixture(t, "qa_task_config.yaml"))
	disagree := strings.Replace(qa, "  metric_name: string_f1", "  metric_name: exact_match", 1)
	cfg, rep := Parse([]byte(disagree))
	if !rep.OK() || len(rep.Warnings) != 1 || rep.Warnings[0].Path != "model_evaluation_metric.metric_name" {
		t.Fatalf("want one warning, got %v %v", rep.Problems, rep.Warnings)
	}
	if cfg.ModelWrongMetric.Type != "string_f1" {
		t.Errorf("v1 must win: %+v", cfg.ModelWrongMetric)
	}
	threshold := strings.Replace(qa, "    threshold: 0.4", "    threshold: 0.5", 1)
	if _, rep := Parse([]byte(threshold)); len(rep.Warnings) != 1 || rep.Warnings[0].Path != "model_evaluation_metric.metric_parameters.threshold" {
		t.Errorf("want a threshold warning, got %v", rep.Warnings)
	}

	// Without model_wrong_metric, the v2 metric applies to the prediction field.
	v2only := strings.Replace(qa, "model_wrong_metric:\n  reference_name: answer\n  threshold: 0.4\n  type: string_f1\n", "", 1)
	v2only = strings.Replace(v2only, "threshold: 0.4", "threshold: 0.6", 1)
	cfg = mustParse(t, []byte(v2only))
	want := ModelWrongMetric{Type: "string_f1", ReferenceNames: []string{"answer"}, Threshold: 0.6}
	if !reflect.DeepEqual(cfg.ModelWrongMetric, want) {
		t.Errorf("v2 metric = %+v, want %+v", cfg.ModelWrongMetric, want)
	}

	// Neither: ask_user.
	none := strings.Replace(v2only, "model_evaluation_metric:\n  metric_name: string_f1\n  metric_parameters:\n    threshold: 0.6\n", "", 1)
	if cfg := mustParse(t, []byte(none)); !cfg.AsksUser() || cfg.ModelWrong(nil, nil) != nil {
		t.Errorf("default must be ask_user, got %+v", cfg.ModelWrongMetric)
	}
}

// A pure v2 config (no input, no output) is synthesised completely.
func TestPureV2Config(t *testing.T) {
	t.Parallel()
	src := `
goal: {type: radio-button-options, options: [yes, no], field_name_for_the_model: label, text: Fool the model}
context: {type: zoom_image, field_names_for_the_model: {context: image}}
user_input:
- {type: text, placeholder: Ask something, field_name_for_the_model: question}
- {type: multioptions, options: [easy, hard], field_name_for_the_model: difficulty}
model_output: {model_prediction_label: label}
model_evaluation_metric: {metric_name: exact_match}
perf_metric: {type: accuracy, reference_name: label}
`
	cfg := mustParse(t, []byte(src))
	checks := map[string][2]string{
		"Context":     {strings.Join(sigs(cfg.Context), " "), "context:image"},
		"Input":       {strings.Join(sigs(cfg.Input), " "), "question:string difficulty:multiclass[easy hard] label:multiclass[yes no](goal)"},
		"Output":      {strings.Join(sigs(cfg.Output), " "), "label:multiclass[yes no](goal)"},
		"GoalMessage": {cfg.GoalMessage, "Fool the model"},
		"ContextType": {cfg.ContextType, "zoom_image"},
		"ModelWrong":  {fmt.Sprint(cfg.ModelWrongMetric), "{exact_match [label] 0}"},
		"ModelInput":  {fmt.Sprint(cfg.ModelInputMap), "map[image:context]"},
	}
	for what, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %s, want %s", what, c[0], c[1])
		}
	}
	got := cfg.ModelInput(map[string]any{"context": "https://x/1.png"}, map[string]any{"question": "q", "difficulty": "easy", "label": "yes"})
	want := map[string]any{"context": "https://x/1.png", "image": "https://x/1.png", "question": "q", "difficulty": "easy"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ModelInput = %v, want %v", got, want)
	}
}

// v1 input wins over v2 keys that name the same field; v2 fills gaps.
func TestV1WinsV2FillsGaps(t *testing.T) {
	t.Parallel()
	src := edited(t, func(d map[string]any) {
		d["user_input"] = []any{
			map[string]any{"type": "text", "field_name_for_the_model": "hypothesis", "placeholder": "v2"},
			map[string]any{"type": "text", "field_name_for_the_model": "reason"},
		}
		d["goal"] = map[string]any{"type": "multioptions", "options": []any{"x", "y"}, "field_name_for_the_model": "label"}
	})
	cfg := mustParse(t, src)
	if got := strings.Join(sigs(cfg.Input), " "); got != "hypothesis:string label:multiclass[entailed neutral contradictory] reason:string" {
		t.Errorf("Input = %s", got)
	}
	if cfg.Input[0].Placeholder == "v2" {
		t.Error("v1 input must win over user_input")
	}
}

// Oversized sections are problems, not slow parses.
func TestTooManyEntries(t *testing.T) {
	t.Parallel()
	many := func(n int, f func(i int) any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	src := edited(t, func(d map[string]any) {
		item(d, "input", 1)["labels"] = many(maxLabels+1, func(i int) any { return i })
		d["metadata"].(map[string]any)["create"] = many(maxEntries+1, func(i int) any {
			return map[string]any{"name": fmt.Sprint("f", i), "type": "string"}
		})
	})
	_, rep := Parse(src)
	for _, path := range []string{"input[1].labels", "metadata.create"} {
		if !hasProblem(rep.Problems, path, "too many entries") {
			t.Errorf("want too many entries at %s, got %v", path, rep.Problems)
		}
	}
}

// Long lists are rejected up front and values are checked against labels
// with sets, so the longest lists a document or a request can hold cost
// linear time, not quadratic.
func TestLargestDocumentIsFast(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(baseConfig + "user_input:\n")
	for i := 0; i < 15000; i++ {
		fmt.Fprintf(&b, "- {field_name_for_the_model: f%d}\n", i)
	}
	b.WriteString("goal: {type: multioptions, field_name_for_the_model: big, options: [")
	for i := 0; i < 50000; i++ {
		fmt.Fprintf(&b, "l%d,", i)
	}
	b.WriteString("l]}\n")
	if b.Len() > MaxSourceBytes {
		t.Fatalf("test document too large: %d", b.Len())
	}
	start := time.Now()
	_, rep := Parse([]byte(b.String()))
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("Parse took %v", elapsed)
	}
	for _, path := range []string{"user_input", "goal.options"} {
		if !hasProblem(rep.Problems, path, "too many entries") {
			t.Errorf("want too many entries at %s, got %v", path, rep.Problems)
		}
	}

	cfg := mustParse(t, []byte(multilabelConfig))
	tags := make([]any, 200000)
	for i := range tags {
		tags[i] = "cat"
	}
	start = time.Now()
	ps := cfg.CheckInput(nil, map[string]any{"tags": tags}, Limits{})
	if elapsed := time.Since(start); elapsed > 10*time.Second || len(ps) != len(tags)-1 {
		t.Errorf("CheckInput took %v and found %d problems", elapsed, len(ps))
	}
}

func TestParseMapRejectsOddValues(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(baseConfig), &doc); err != nil {
		t.Fatal(err)
	}
	doc["hook"] = func() {}
	doc["ints"] = map[int]string{1: "a"}
	doc["bad"] = "\xff"
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	cfg, rep := ParseMap(doc)
	if cfg == nil {
		t.Fatalf("want a config, got %v", rep.Problems)
	}
	for _, p := range []string{"hook", "ints", "bad"} {
		if !hasProblem(rep.Problems, p, "") {
			t.Errorf("want a problem at %s, got %v", p, rep.Problems)
		}
	}
	if cfg, rep := ParseMap(map[string]any{"loop": cyclic}); cfg != nil || !strings.Contains(rep.Problems[0].Message, "deeper") {
		t.Errorf("a cyclic map must be rejected, got %v", rep.Problems)
	}
	if cfg, rep := ParseMap(nil); cfg != nil || rep.OK() {
		t.Error("a nil map must be rejected")
	}
}
