package service

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/demo"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// FuzzDatasetLine: any line of an evaluation-dataset upload, for any demo task, goes through
// parseDatasetLine and the perturbations without panicking, and either fails with an error fit to
// show (a domain error naming the field, or a plain message the upload prefixes with the line), or
// yields an example with a uid, a gold target, an input storable as JSON and free of NUL, and
// perturbed copies in valid UTF-8 that keep the original's gold.
// Run with `go test -run '^$' -fuzz '^FuzzDatasetLine$' ./internal/service`.
func FuzzDatasetLine(f *testing.F) {
	tasks, err := demo.Tasks()
	if err != nil {
		f.Fatal(err)
	}
	var cfgs []*taskconfig.Config
	for _, t := range tasks {
		cfg, rep := taskconfig.Parse(t.Config)
		if cfg == nil || !rep.OK() {
			f.Fatalf("demo %s: %v", t.Code, rep.Problems)
		}
		cfgs = append(cfgs, cfg)
		for i, e := range t.Seed[:3] {
			row := map[string]any{"uid": i}
			for k, v := range e.Input {
				row[k] = v
			}
			target, _ := primaryTarget(cfg)
			row[target.Name] = e.Label
			b, _ := json.Marshal(row)
			f.Add(uint8(len(cfgs)-1), b)
		}
	}
	for _, s := range []string{
		`{"uid":"1","context":"John met Mary.","statement":"He liked her.","label":"positive","tags":["a"]}`,
		`{"uid":1e400,"statement":"x","label":"positive"}`, `{"uid":"1","statement":"x","label":["positive"]}`,
		`{"uid":"1","context":"The cat sat.","question":"Who sat?","answer":["The cat","cat",""]}`,
		`{"uid":"1","statement":"\u0000","label":"positive"}`, `{"uid":"1","statement":"x","label":"positive","tags":[1]}`,
		`{"uid":"` + strings.Repeat("u", 201) + `","statement":"x","label":"positive"}`, `[]`, `null`, `{} {}`,
		"{\"uid\":\"1\",\"statement\":\"\xff\",\"label\":\"positive\"}",
	} {
		for i := range cfgs {
			f.Add(uint8(i), []byte(s))
		}
	}
	s := &Service{Limits: taskconfig.Limits{MaxFieldBytes: 500}}
	f.Fuzz(func(t *testing.T, which uint8, line []byte) {
		cfg := cfgs[int(which)%len(cfgs)]
		target, _ := primaryTarget(cfg)
		ex, rx, err := s.parseDatasetLine(cfg, target, line)
		if err != nil {
			if de, ok := err.(*dynabench.Error); ok && (de.Code != dynabench.EINVALID || de.Message == "") {
				t.Fatalf("error %+v", de)
			}
			if err.Error() == "" {
				t.Fatal("an empty error message")
			}
			return
		}
		if ex.UID == "" || len(ex.Gold) == 0 || hasNUL(ex.Input) {
			t.Fatalf("accepted a bad example: %+v", ex)
		}
		if _, err := json.Marshal(ex.Input); err != nil {
			t.Fatalf("input not storable: %v", err)
		}
		all, _ := perturbAll(cfg, []*dynabench.DatasetExample{ex}, []rawExample{rx})
		for _, p := range all[1:] {
			b, _ := json.Marshal(p.Input)
			if !utf8.Valid(b) || p.OriginalUID != ex.UID || strings.Join(p.Gold, "\x00") != strings.Join(ex.Gold, "\x00") {
				t.Fatalf("perturbed copy %+v of %+v", p, ex)
			}
		}
	})
}
