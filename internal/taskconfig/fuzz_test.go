package taskconfig

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzConfigs are the configs FuzzCheckInput applies: the Dynabench
// fixtures and the multilabel one.
func fuzzConfigs(f *testing.F) []*Config {
	files, err := filepath.Glob(filepath.Join("testdata", "dynabench", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	var cfgs []*Config
	for _, file := range files {
		cfgs = append(cfgs, mustParse(f, fixture(f, filepath.Base(file))))
	}
	return append(cfgs, mustParse(f, []byte(multilabelConfig)))
}

func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "dynabench", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		f.Add(fixture(f, filepath.Base(file)))
	}
	for _, src := range []string{
		baseConfig, multilabelConfig, aliasBomb(), "a: [1, 2", "- a", "", "1: x\ntrue: y\n",
		`{"context": [{"name": "c", "type": "string"}], "input": [{"name": "l", "type": "multiclass", "labels": [1, 2]}],
		  "output": [{"name": "l"}], "perf_metric": [{"type": "accuracy", "reference_name": "l"}]}`,
		"x: &a {b: *a}", "x: " + strings.Repeat("[", 70), "goal: {type: multioptions, options: [{a: b}]}",
		"context: {type: selectable-text, field_names_for_the_model: {context: text, answer: label, span: s}}\nperf_metric: {}",
		"model_wrong_metric: {type: string_f1, reference_name: a, threshold: .nan}\naggregation_metric: {default_weights: {accuracy: .inf}}",
	} {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, rep := Parse(src)
		if rep == nil {
			t.Fatal("nil report")
		}
		if cfg == nil {
			if rep.OK() {
				t.Fatal("a nil config must come with a problem")
			}
			return
		}
		if cfg.Source != string(src) {
			t.Fatal("Source changed")
		}
		exercise(t, cfg, rep.OK())
		if !rep.OK() {
			return
		}
		// A clean config survives the round trip through ParseMap.
		again, rep2 := ParseMap(cfg.Raw)
		if again == nil || !rep2.OK() || !sameConfig(cfg, again) {
			t.Fatalf("ParseMap(Raw) differs: %v\n%+v\n%+v", rep2.Problems, cfg, again)
		}
	})
}

// exercise calls every method with an example derived from the config
// itself. For a clean config that example is valid, and a model echoing
// its targets is not fooled.
func exercise(t *testing.T, cfg *Config, clean bool) {
	ctx, input := sampleExample(cfg)
	cfg.Targets()
	cfg.Labels()
	ctxProblems := cfg.CheckContext(ctx, Limits{})
	inProblems := cfg.CheckInput(ctx, input, Limits{})
	cfg.ModelInput(ctx, input)
	out, outProblems := cfg.CheckOutput(ctx, input)
	wrong := cfg.ModelWrong(input, out)
	cfg.CheckCreateMetadata(input, nil, Limits{})
	cfg.CheckValidateMetadata(ctx, LabelIncorrect, input, Limits{})
	if !clean {
		return
	}
	if len(ctxProblems)+len(inProblems)+len(outProblems) != 0 {
		t.Fatalf("a sample example of a clean config has problems: %v %v %v", ctxProblems, inProblems, outProblems)
	}
	if !cfg.AsksUser() && (wrong == nil || *wrong) {
		t.Fatalf("echoing the targets must not fool the model: %v", show(wrong))
	}
}

// sampleExample builds a valid context and input for a config.
func sampleExample(cfg *Config) (ctx, input map[string]any) {
	ctx, input = map[string]any{}, map[string]any{}
	for _, f := range cfg.Context {
		ctx[f.Name] = sampleValue(f)
	}
	for _, f := range cfg.Input {
		input[f.Name] = sampleValue(f)
	}
	return ctx, input
}

func sampleValue(f Field) any {
	switch {
	case f.Type == TypeMultilabel && len(f.Labels) > 0:
		return []any{f.Labels[0]}
	case len(f.Labels) > 0:
		return f.Labels[0]
	case f.Type == TypeContextStringSelection:
		return "context"
	}
	return "some context text"
}

func FuzzCheckInput(f *testing.F) {
	cfgs := fuzzConfigs(f)
	seeds := []struct{ ctx, input string }{
		{`{"context": "A man sleeps."}`, `{"hypothesis": "A man is awake.", "label": "contradictory"}`},
		{`{"context": "The cat sat on the mat."}`, `{"question": "Who sat?", "answer": "The cat"}`},
		{`{"context": "x"}`, `{"statement": "s", "label": "hateful", "extra": [1, {"a": null}]}`},
		{`{"image": "https://x/1.png", "caption": "c"}`, `{"tags": ["cat", "dog", "cat"]}`},
		{`{"context": 3}`, `{"answer": "", "label": 1e400, "prob": {"a": -0}}`},
		{`{}`, `{"label": " neutral ", "hypothesis": "\ud800"}`},
	}
	for c, cfg := range cfgs {
		ctx, input := sampleExample(cfg)
		ctxJSON, _ := json.Marshal(ctx)
		inputJSON, _ := json.Marshal(input)
		f.Add(uint8(c), string(ctxJSON), string(inputJSON))
		for _, s := range seeds {
			f.Add(uint8(c), s.ctx, s.input)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, ctxJSON, inputJSON string) {
		cfg := cfgs[int(which)%len(cfgs)]
		ctx, input := decodeObject(ctxJSON), decodeObject(inputJSON)
		lim := Limits{MaxFieldBytes: 64}
		cfg.CheckContext(ctx, lim)
		problems := cfg.CheckInput(ctx, input, lim)
		cfg.ModelInput(ctx, input)
		cfg.CheckCreateMetadata(input, nil, lim)
		cfg.CheckValidateMetadata(ctx, LabelIncorrect, input, lim)
		out, outProblems := cfg.CheckOutput(ctx, input)
		wrong := cfg.ModelWrong(input, out)
		if len(problems) != 0 {
			return
		}
		// A model that answers exactly what a valid input says is right.
		if len(outProblems) != 0 {
			t.Fatalf("a valid input is not a valid output: %v", outProblems)
		}
		if !cfg.AsksUser() && (wrong == nil || *wrong) {
			t.Fatalf("echoing the target must not fool the model: %v", show(wrong))
		}
	})
}

// decodeObject decodes a JSON object as an API handler would, or falls
// back to an object holding the text, so every input reaches the checks.
func decodeObject(s string) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil || m == nil {
		return map[string]any{"context": s, "label": s, "answer": s}
	}
	return m
}
