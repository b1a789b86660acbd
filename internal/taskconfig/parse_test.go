package taskconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// fixture reads one of the Dynabench example configs.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "dynabench", name))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// mustParse parses a config that must have no problems.
func mustParse(t testing.TB, src []byte) *Config {
	t.Helper()
	cfg, rep := Parse(src)
	if cfg == nil || !rep.OK() {
		t.Fatalf("Parse: cfg=%v problems=%v", cfg != nil, rep.Problems)
	}
	return cfg
}

// sig renders a field compactly so tests can compare whole field lists.
func sig(f Field) string {
	s := f.Name + ":" + f.Type
	if len(f.Labels) > 0 {
		s += "[" + strings.Join(f.Labels, " ") + "]"
	}
	if f.ReferenceName != "" {
		s += "->" + f.ReferenceName
	}
	if f.SingleProb {
		s += "(single)"
	}
	if f.AsGoalMessage {
		s += "(goal)"
	}
	if f.ModelWrongCondition != nil {
		s += fmt.Sprintf("(wrong=%v)", *f.ModelWrongCondition)
	}
	if f.ValidatedLabelCondition != "" {
		s += "(" + f.ValidatedLabelCondition + ")"
	}
	return s
}

func sigs(fields []Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = sig(f)
	}
	return out
}

const (
	nliLabels = "[entailed neutral contradictory]"
	createSig = "example_explanation:string model_explanation_right:string(wrong=false) model_explanation_wrong:string(wrong=true)"
	tailSig   = "target_explanation:string(incorrect) flag_reason:string(flagged) validator_example_explanation:string(correct) validator_model_explanation:string"
)

func TestParseDynabenchFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file        string
		contextType string
		goal        string // prefix of GoalMessage
		context     string
		input       string
		output      string
		validate    string
		modelWrong  ModelWrongMetric
		perf        string
		prediction  string
		modelInput  map[string]string
		labels      []string
	}{
		{
			file: "nli_task_config.yaml", contextType: "plain-text",
			context:    "context:string",
			input:      "hypothesis:string label:multiclass" + nliLabels + "(goal)",
			output:     "label:multiclass" + nliLabels + "(goal) prob:prob->label",
			validate:   "corrected_label:multiclass" + nliLabels + "(incorrect) " + tailSig,
			modelWrong: ModelWrongMetric{Type: "exact_match", ReferenceNames: []string{"label"}},
			perf:       "accuracy:label", prediction: "label",
			modelInput: map[string]string{"statement": "hypothesis"},
			labels:     []string{"entailed", "neutral", "contradictory"},
		},
		{
			file: "old_nli_task_config.yaml", contextType: "plain-text",
			context:    "context:string",
			input:      "hypothesis:string label:multiclass" + nliLabels + "(goal)",
			output:     "label:multiclass" + nliLabels + "(goal) prob:prob->label",
			validate:   "corrected_label:multiclass" + nliLabels + "(incorrect) " + tailSig,
			modelWrong: ModelWrongMetric{Type: "exact_match", ReferenceNames: []string{"label"}},
			perf:       "accuracy:label", prediction: "label",
			labels: []string{"entailed", "neutral", "contradictory"},
		},
		{
			file: "qa_task_config.yaml", contextType: "selectable-text", goal: "enter a question",
			context:    "context:string",
			input:      "question:string answer:context_string_selection->context",
			output:     "answer:context_string_selection->context conf:prob(single)",
			validate:   "corrected_answer:context_string_selection->context(incorrect) " + tailSig,
			modelWrong: ModelWrongMetric{Type: "string_f1", ReferenceNames: []string{"answer"}, Threshold: 0.4},
			perf:       "squad_f1:answer", prediction: "answer",
			modelInput: map[string]string{"question": "question", "context": "context"},
		},
		{
			file: "old_qa_task_config.yaml", contextType: "plain-text", goal: "enter a question",
			context:    "context:string",
			input:      "question:string answer:context_string_selection->context",
			output:     "answer:context_string_selection->context conf:prob(single)",
			validate:   "corrected_answer:context_string_selection->context(incorrect) " + tailSig,
			modelWrong: ModelWrongMetric{Type: "string_f1", ReferenceNames: []string{"answer"}, Threshold: 0.4},
			perf:       "squad_f1:answer", prediction: "answer",
		},
		{
			file: "sentiment_task_config.yaml", contextType: "plain-text",
			context:    "context:string",
			input:      "statement:string label:multiclass[negative positive neutral](goal)",
			output:     "label:multiclass[negative positive neutral](goal) prob:prob->label",
			validate:   "corrected_label:multiclass[negative positive entailed](incorrect) " + tailSig,
			modelWrong: ModelWrongMetric{Type: "exact_match", ReferenceNames: []string{"label"}},
			perf:       "macro_f1:label", prediction: "label",
			modelInput: map[string]string{"statement": "statement"},
			labels:     []string{"negative", "positive", "neutral"},
		},
		{
			file: "old_sentiment_task_config.yaml", contextType: "plain-text",
			context:    "context:string",
			input:      "statement:string label:multiclass[negative positive neutral](goal)",
			output:     "label:multiclass[negative positive neutral](goal) prob:prob->label",
			validate:   "corrected_label:multiclass[negative positive entailed](incorrect) " + tailSig,
			modelWrong: ModelWrongMetric{Type: "exact_match", ReferenceNames: []string{"label"}},
			perf:       "macro_f1:label", prediction: "label",
			labels: []string{"negative", "positive", "neutral"},
		},
		{
			file: "hs_task_config.yaml", contextType: "plain-text",
			context:    "context:string",
			input:      "statement:string label:multiclass[hateful non-hateful](goal)",
			output:     "label:multiclass[hateful non-hateful](goal) prob:prob->label",
			validate:   "corrected_label:multiclass[not-hateful hateful](incorrect) " + tailSig,
			modelWrong: ModelWrongMetric{Type: "exact_match", ReferenceNames: []string{"label"}},
			perf:       "macro_f1:label", prediction: "label",
			modelInput: map[string]string{"statement": "statement"},
			labels:     []string{"hateful", "non-hateful"},
		},
		{
			file: "old_hs_task_config.yaml", contextType: "plain-text",
			context:    "context:string",
			input:      "statement:string label:multiclass[not-hateful hateful](goal)",
			output:     "label:multiclass[not-hateful hateful](goal) prob:prob->label",
			validate:   "corrected_label:multiclass[not-hateful hateful](incorrect) " + tailSig,
			modelWrong: ModelWrongMetric{Type: "exact_match", ReferenceNames: []string{"label"}},
			perf:       "macro_f1:label", prediction: "label",
			labels: []string{"not-hateful", "hateful"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			src := fixture(t, tt.file)
			cfg, rep := Parse(src)
			if cfg == nil || len(rep.Problems) != 0 || len(rep.Warnings) != 0 {
				t.Fatalf("want a config with no problems or warnings, got cfg=%v %v %v", cfg != nil, rep.Problems, rep.Warnings)
			}
			if cfg.Source != string(src) {
				t.Error("Source is not the original text")
			}
			check := func(what, got, want string) {
				t.Helper()
				if got != want {
					t.Errorf("%s:\n got %s\nwant %s", what, got, want)
				}
			}
			check("ContextType", cfg.ContextType, tt.contextType)
			check("Context", strings.Join(sigs(cfg.Context), " "), tt.context)
			check("Input", strings.Join(sigs(cfg.Input), " "), tt.input)
			check("Output", strings.Join(sigs(cfg.Output), " "), tt.output)
			check("CreateMetadata", strings.Join(sigs(cfg.CreateMetadata), " "), createSig)
			check("ValidateMetadata", strings.Join(sigs(cfg.ValidateMetadata), " "), tt.validate)
			check("Perf", fmt.Sprintf("%s:%s", cfg.Perf[0].Type, cfg.Perf[0].ReferenceName), tt.perf)
			check("PredictionField", cfg.PredictionField, tt.prediction)
			check("DeltaMetrics", strings.Join(cfg.DeltaMetrics, " "), "fairness robustness")
			check("Aggregation", cfg.Aggregation.Type, "dynascore")
			if !strings.HasPrefix(cfg.GoalMessage, tt.goal) || (tt.goal == "") != (cfg.GoalMessage == "") {
				t.Errorf("GoalMessage = %q, want prefix %q", cfg.GoalMessage, tt.goal)
			}
			if !reflect.DeepEqual(cfg.ModelWrongMetric, tt.modelWrong) {
				t.Errorf("ModelWrongMetric = %+v, want %+v", cfg.ModelWrongMetric, tt.modelWrong)
			}
			if !reflect.DeepEqual(cfg.ModelInputMap, tt.modelInput) {
				t.Errorf("ModelInputMap = %v, want %v", cfg.ModelInputMap, tt.modelInput)
			}
			if got := cfg.Labels(); !reflect.DeepEqual(got, tt.labels) {
				t.Errorf("Labels() = %v, want %v", got, tt.labels)
			}
			if got := cfg.Targets(); len(got) != 1 || got[0] != tt.prediction {
				t.Errorf("Targets() = %v, want [%s]", got, tt.prediction)
			}
		})
	}
}

func TestParseKeepsHSContentWarning(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, fixture(t, "hs_task_config.yaml"))
	if !strings.HasPrefix(cfg.ContentWarning, "This is sensitive content!") {
		t.Errorf("ContentWarning = %q", cfg.ContentWarning)
	}
	if cfg.Raw["response_fields"] == nil {
		t.Error("Raw lost response_fields")
	}
}

// The v2 and v1 spellings of one task must normalise to the same schema
// where it matters to the rest of the platform.
func TestParseDialectsAgree(t *testing.T) {
	t.Parallel()
	for _, task := range []string{"nli", "qa", "sentiment"} {
		v2 := mustParse(t, fixture(t, task+"_task_config.yaml"))
		v1 := mustParse(t, fixture(t, "old_"+task+"_task_config.yaml"))
		for _, cfg := range []*Config{v1, v2} {
			for i := range cfg.Input {
				cfg.Input[i].Placeholder = "" // wording differs between the two files
			}
		}
		if !reflect.DeepEqual(sigs(v1.Input), sigs(v2.Input)) || !reflect.DeepEqual(v1.Targets(), v2.Targets()) ||
			!reflect.DeepEqual(v1.ModelWrongMetric, v2.ModelWrongMetric) {
			t.Errorf("%s: v1 and v2 differ: %v / %v", task, sigs(v1.Input), sigs(v2.Input))
		}
	}
}

// JSON is accepted as text (Parse) and as a decoded object (ParseMap), and
// both give the same config as the YAML.
func TestParseJSONAndMap(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "dynabench", "*.yaml"))
	if err != nil || len(files) != 8 {
		t.Fatalf("want 8 fixtures, got %d (%v)", len(files), err)
	}
	for _, file := range files {
		fromYAML := mustParse(t, fixture(t, filepath.Base(file)))
		var doc any
		if err := yaml.Unmarshal([]byte(fromYAML.Source), &doc); err != nil {
			t.Fatal(err)
		}
		js, err := json.MarshalIndent(doc, "", "\t") // tabs: not valid YAML indentation
		if err != nil {
			t.Fatal(err)
		}
		fromJSON := mustParse(t, js)
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil {
			t.Fatal(err)
		}
		fromMap, rep := ParseMap(m)
		if fromMap == nil || !rep.OK() {
			t.Fatalf("%s: ParseMap: %v", file, rep.Problems)
		}
		reparsed := mustParse(t, []byte(fromMap.Source))
		for name, cfg := range map[string]*Config{"JSON": fromJSON, "map": fromMap, "map Source": reparsed} {
			if !sameConfig(fromYAML, cfg) {
				t.Errorf("%s: %s differs from YAML:\n%+v\n%+v", file, name, fromYAML, cfg)
			}
		}
	}
}

// sameConfig compares everything but Source.
func sameConfig(a, b *Config) bool {
	x, y := *a, *b
	x.Source, y.Source = "", ""
	return reflect.DeepEqual(x, y)
}

func TestModelInputNLIv2(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, fixture(t, "nli_task_config.yaml"))
	ctx := map[string]any{"context": "A man is sleeping.", "tags": "ignored"}
	input := map[string]any{"hypothesis": "A man is awake.", "label": "contradictory"}
	got := cfg.ModelInput(ctx, input)
	want := map[string]any{"context": "A man is sleeping.", "hypothesis": "A man is awake.", "statement": "A man is awake."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ModelInput = %v, want %v", got, want)
	}
}

func TestModelInputQAv2(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, fixture(t, "qa_task_config.yaml"))
	ctx := map[string]any{"context": "Paris is the capital of France."}
	input := map[string]any{"question": "What is the capital of France?", "answer": "Paris"}
	got := cfg.ModelInput(ctx, input)
	want := map[string]any{"context": ctx["context"], "question": input["question"]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ModelInput = %v, want %v", got, want)
	}
}

// A model field that names a target under another name must not leak it.
func TestModelInputNeverLeaksTargets(t *testing.T) {
	t.Parallel()
	src := strings.Replace(string(fixture(t, "nli_task_config.yaml")), "  statement: hypothesis", "  statement: hypothesis\n  gold: label", 1)
	cfg, rep := Parse([]byte(src))
	if !rep.OK() || len(rep.Warnings) != 1 || rep.Warnings[0].Path != "model_input.gold" {
		t.Fatalf("want one warning at model_input.gold, got %v %v", rep.Problems, rep.Warnings)
	}
	got := cfg.ModelInput(map[string]any{"context": "c"}, map[string]any{"hypothesis": "h", "label": "neutral"})
	if _, leaked := got["gold"]; leaked {
		t.Errorf("the target was sent to the model: %v", got)
	}
}

func TestNilConfigIsSafe(t *testing.T) {
	t.Parallel()
	var c *Config
	in := map[string]any{"x": "y"}
	if c.Targets() != nil || c.Labels() != nil || c.ModelWrong(in, in) != nil || c.AsksUser() ||
		len(c.ModelInput(in, in)) != 0 || c.CheckInput(in, in, Limits{}) != nil ||
		c.CheckContext(in, Limits{}) != nil || c.CheckCreateMetadata(in, nil, Limits{}) != nil ||
		c.CheckValidateMetadata(in, "correct", in, Limits{}) != nil {
		t.Error("a nil config should answer with zero values")
	}
	if _, ps := c.CheckOutput(in, in); ps != nil {
		t.Error("CheckOutput on nil config")
	}
	if _, ok := c.InputField("x"); ok {
		t.Error("InputField on nil config")
	}
}

func TestProblemString(t *testing.T) {
	t.Parallel()
	if got := (Problem{Path: "output[1].reference_name", Message: `no field named "labl"`}).String(); got != `output[1].reference_name: no field named "labl"` {
		t.Errorf("String() = %q", got)
	}
	if got := (Problem{Message: "the config is empty"}).String(); got != "the config is empty" {
		t.Errorf("String() = %q", got)
	}
	js, _ := json.Marshal(Problem{Path: "a", Message: "b"})
	if string(js) != `{"field":"a","message":"b"}` {
		t.Errorf("JSON = %s", js)
	}
	var nilReport *Report
	if !nilReport.OK() || (&Report{Problems: []Problem{{}}}).OK() || !(&Report{Warnings: []Problem{{}}}).OK() {
		t.Error("Report.OK")
	}
}
