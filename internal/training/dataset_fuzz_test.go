package training_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/demo"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
	"github.com/dynabench-go/dynabench/internal/training"
)

// FuzzReadJSONL: any dataset file, for any demo task, is read without panicking, and either fails
// with an EINVALID or ETOOLARGE error naming the file (and line), or gives rows that each have a
// key, a target the task accepts (one of its labels), and a model input that stores as JSON; the
// same file always reads the same. Run with
// `go test -run '^$' -fuzz '^FuzzReadJSONL$' ./internal/training`.
func FuzzReadJSONL(f *testing.F) {
	tasks, err := demo.Tasks()
	if err != nil {
		f.Fatal(err)
	}
	var cfgs []*taskconfig.Config
	for i, t := range tasks {
		cfg, rep := taskconfig.Parse(t.Config)
		if cfg == nil || !rep.OK() {
			f.Fatalf("demo %s: %v", t.Code, rep.Problems)
		}
		cfgs = append(cfgs, cfg)
		var body bytes.Buffer
		for _, s := range t.Seed[:3] {
			line, _ := json.Marshal(map[string]any{"input": s.Input, "label": s.Label})
			body.Write(append(line, '\n'))
		}
		f.Add(uint8(i), body.Bytes())
	}
	for _, s := range []string{
		`{"uid": "1", "context": "A man sleeps.", "hypothesis": "He is awake.", "label": "contradictory"}`,
		`{"uid": 7, "statement": "fine", "label": "positive", "tags": ["a"]}`,
		`{"uid": 1e30, "statement": "fine", "label": "hateful"}`,
		`{"context": "Lake Varna is deep.", "question": "What is deep?", "answer": "Lake Varna"}`,
		`{"input": {"statement": "x"}, "label": 3}`, `{"input": null, "label": "neutral"}`, `null`, `[1]`,
		"\n \n{\"statement\": \"\xff\", \"label\": \"negative\"}", `{"context": "abc", "question": "q", "answer": "zzz"}`,
	} {
		for i := range cfgs {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		cfg := cfgs[int(which)%len(cfgs)]
		src, err := training.ReadJSONL("data.jsonl", cfg, bytes.NewReader(body))
		if err != nil {
			var de *dynabench.Error
			if !errors.As(err, &de) || (de.Code != dynabench.EINVALID && de.Code != dynabench.ETOOLARGE) {
				t.Fatalf("error %v (%T): want EINVALID or ETOOLARGE", err, err)
			}
			if !strings.Contains(de.Field+de.Message, "data.jsonl") {
				t.Fatalf("error %+v does not name the file", de)
			}
			return
		}
		labels := cfg.Labels()
		for _, ex := range src.Examples {
			if ex.Key == "" {
				t.Fatalf("row without a key: %+v", ex)
			}
			if len(labels) > 0 && !slices.Contains(labels, ex.Label) {
				t.Fatalf("row label %q is not one of %v", ex.Label, labels)
			}
			if _, err := json.Marshal(ex.Input); err != nil {
				t.Fatalf("row input does not store as JSON: %v", err)
			}
		}
		again, err := training.ReadJSONL("data.jsonl", cfg, bytes.NewReader(body))
		if err != nil || !reflect.DeepEqual(src, again) {
			t.Fatalf("a second read differs: %v", err)
		}
	})
}
