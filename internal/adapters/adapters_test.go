package adapters_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

func parse(t *testing.T, path string) *taskconfig.Config {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, rep := taskconfig.Parse(src)
	if cfg == nil || !rep.OK() {
		t.Fatalf("%s: %v", path, rep.Problems)
	}
	return cfg
}

func TestSpecFor(t *testing.T) {
	t.Parallel()
	nli := adapters.Spec{Kind: adapters.KindClassification, Labels: []string{"entailed", "neutral", "contradictory"},
		LabelField: "label", ProbField: "prob", TextFields: []string{"context", "hypothesis"}}
	classify := func(labels ...string) adapters.Spec {
		return adapters.Spec{Kind: adapters.KindClassification, Labels: labels, LabelField: "label", ProbField: "prob",
			TextFields: []string{"context", "statement"}}
	}
	qa := adapters.Spec{Kind: adapters.KindExtractiveQA, AnswerField: "answer", ConfField: "conf",
		ContextField: "context", QuestionField: "question", TextFields: []string{"context", "question"}}
	dynabenchDir := filepath.Join("..", "taskconfig", "testdata", "dynabench")
	demoDir := filepath.Join("..", "demo", "data")
	tests := []struct {
		path string
		want adapters.Spec
	}{
		{filepath.Join(dynabenchDir, "nli_task_config.yaml"), nli},
		{filepath.Join(dynabenchDir, "old_nli_task_config.yaml"), nli},
		{filepath.Join(dynabenchDir, "sentiment_task_config.yaml"), classify("negative", "positive", "neutral")},
		{filepath.Join(dynabenchDir, "old_sentiment_task_config.yaml"), classify("negative", "positive", "neutral")},
		{filepath.Join(dynabenchDir, "hs_task_config.yaml"), classify("hateful", "non-hateful")},
		{filepath.Join(dynabenchDir, "old_hs_task_config.yaml"), classify("not-hateful", "hateful")},
		{filepath.Join(dynabenchDir, "qa_task_config.yaml"), qa},
		{filepath.Join(dynabenchDir, "old_qa_task_config.yaml"), qa},
		{filepath.Join(demoDir, "sentiment", "config.yaml"), classify("positive", "negative", "neutral")},
		{filepath.Join(demoDir, "nli", "config.yaml"), nli},
		{filepath.Join(demoDir, "qa", "config.yaml"), qa},
		{filepath.Join(demoDir, "hs", "config.yaml"), classify("hateful", "not-hateful")},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(filepath.Dir(tt.path))+"/"+filepath.Base(tt.path), func(t *testing.T) {
			t.Parallel()
			cfg := parse(t, tt.path)
			got := adapters.SpecFor(cfg)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SpecFor =\n%+v\nwant\n%+v", got, tt.want)
			}
			// Every text field is in what the model is sent.
			in := map[string]any{}
			for _, f := range cfg.Input {
				in[f.Name] = "x"
			}
			ctx := map[string]any{}
			for _, f := range cfg.Context {
				ctx[f.Name] = "x"
			}
			mi := cfg.ModelInput(ctx, in)
			for _, f := range got.TextFields {
				if _, ok := mi[f]; !ok {
					t.Errorf("text field %q is not in the model input %v", f, mi)
				}
			}
		})
	}
}

func TestSpecForOtherTasks(t *testing.T) {
	t.Parallel()
	cfg, rep := taskconfig.Parse([]byte(`
context: [{name: context, type: string}]
input:
- {name: statement, type: string}
- {name: tags, type: multilabel, labels: [a, b]}
output: [{name: tags}]
perf_metric: {type: accuracy, reference_name: tags}
`))
	if !rep.OK() {
		t.Fatal(rep.Problems)
	}
	got := adapters.SpecFor(cfg)
	if got.Kind != "" || got.LabelField != "tags" || !reflect.DeepEqual(got.TextFields, []string{"context", "statement"}) {
		t.Errorf("SpecFor = %+v", got)
	}
	if s := adapters.SpecFor(nil); !reflect.DeepEqual(s, adapters.Spec{}) {
		t.Errorf("SpecFor(nil) = %+v", s)
	}
}

func TestDefaultRegistry(t *testing.T) {
	t.Parallel()
	r := adapters.DefaultRegistry(adapters.Options{})
	if got := r.Kinds(); !reflect.DeepEqual(got, []string{"dynalab", "hf", "kserve", "openai"}) {
		t.Errorf("kinds %v", got)
	}
	_, err := r.New(context.Background(), &dynabench.Model{Kind: "builtin"}, adapters.Spec{})
	var de *dynabench.Error
	if !errors.As(err, &de) || de.Field != "kind" {
		t.Errorf("builtin: %v", err)
	}
	_, err = r.New(context.Background(), &dynabench.Model{ID: 7, Kind: "dynalab", URL: "http://h/", Options: map[string]any{"bogus": 1}},
		adapters.Spec{Kind: adapters.KindClassification, Labels: []string{"a"}, LabelField: "label"})
	if !errors.As(err, &de) || de.Code != dynabench.EINVALID || de.Field != "options.bogus" {
		t.Errorf("bad option: %v", err)
	}
	kinds := r.Kinds()
	sort.Strings(kinds)
	for _, k := range kinds {
		_, err := r.New(context.Background(), &dynabench.Model{Kind: k}, adapters.Spec{Kind: adapters.KindClassification,
			Labels: []string{"a"}, LabelField: "label", TextFields: []string{"t"}})
		if !errors.As(err, &de) || de.Code != dynabench.EINVALID {
			t.Errorf("%s without a URL: %v", k, err)
		}
	}
}
