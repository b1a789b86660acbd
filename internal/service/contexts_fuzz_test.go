package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/demo"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// FuzzContextUpload: any upload body, for any demo task (and the test task), goes through
// ReadJSONL and parseContextLine (what UploadContexts does before storing) without panicking, and
// either fails with an EINVALID or ETOOLARGE error naming the line (or the body) in a message fit
// to show, or yields contexts the task accepts, within the limits, free of NUL and storable as
// JSON. Run with `go test -run '^$' -fuzz '^FuzzContextUpload$' ./internal/service`.
func FuzzContextUpload(f *testing.F) {
	tasks, err := demo.Tasks()
	if err != nil {
		f.Fatal(err)
	}
	cfgs := []*taskconfig.Config{}
	for _, t := range tasks {
		cfg, rep := taskconfig.Parse(t.Config)
		if cfg == nil || !rep.OK() {
			f.Fatalf("demo %s: %v", t.Code, rep.Problems)
		}
		cfgs = append(cfgs, cfg)
		var body bytes.Buffer
		for _, c := range t.Contexts[:3] {
			line, _ := json.Marshal(c)
			body.Write(append(line, '\n'))
		}
		f.Add(uint8(len(cfgs)-1), body.Bytes())
	}
	cfg, rep := taskconfig.Parse([]byte(testConfig))
	if cfg == nil || !rep.OK() {
		f.Fatal(rep.Problems)
	}
	cfgs = append(cfgs, cfg)
	for _, s := range []string{
		`{"context": {"context": "x"}, "tag": " t ", "metadata": {"a": [1, null]}}`,
		"\n\n{\"context\": {\"context\": \"x\"}}\r\n{\"context\": {\"context\": \"y\"}} {}",
		`{"context": {"context": "\u0000"}}`, `{"context": {"context": "x"}, "tag": "\u0000"}`,
		`{"context": {"context": "x"}, "extra": 1}`, `{"context": null}`, `[]`, `{"context": {"context": 1e400}}`,
		`{"context": {"context": "` + strings.Repeat("long ", 60) + `"}}`, "{\"context\": {\"context\": \"\xff\"}}",
		`{"context": {"context": "x"}, "tag": "` + strings.Repeat("t", 101) + `"}`, `{"context": {"context": "\ud800"}}`,
	} {
		f.Add(uint8(len(cfgs)-1), []byte(s))
		f.Add(uint8(1), []byte(s))
	}
	s := &Service{Limits: taskconfig.Limits{MaxFieldBytes: 200}}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		cfg := cfgs[int(which)%len(cfgs)]
		var got []*dynabench.Context
		err := ReadJSONL(bytes.NewReader(body), func(line int, raw []byte) error {
			c, err := s.parseContextLine(cfg, raw)
			if err == nil {
				got = append(got, c)
			}
			return err
		})
		if err != nil {
			var de *dynabench.Error
			if !errors.As(err, &de) || (de.Code != dynabench.EINVALID && de.Code != dynabench.ETOOLARGE) {
				t.Fatalf("error %v (%T): want EINVALID or ETOOLARGE", err, err)
			}
			if !strings.HasPrefix(de.Field, "line ") && de.Field != "body" {
				t.Fatalf("error field %q names neither a line nor the body", de.Field)
			}
			if !utf8.ValidString(de.Message) || strings.ContainsRune(de.Message, 0) || len(de.Message) > 1000 {
				t.Fatalf("error message unfit to show: %q", de.Message)
			}
			return
		}
		for _, c := range got {
			if c.Data == nil || hasNUL(c.Data) || hasNUL(c.Metadata) || strings.ContainsRune(c.Tag, 0) {
				t.Fatalf("accepted context with NUL or no data: %+v", c)
			}
			if len(c.Tag) > 100 || !utf8.ValidString(c.Tag) || c.Tag != strings.TrimSpace(c.Tag) {
				t.Fatalf("accepted tag %q", c.Tag)
			}
			if p := cfg.CheckContext(c.Data, s.Limits); len(p) > 0 {
				t.Fatalf("accepted context fails its check: %v", p)
			}
			for _, v := range []any{c.Data, c.Metadata} {
				b, err := json.Marshal(v)
				if err != nil || !utf8.Valid(b) {
					t.Fatalf("accepted context cannot be stored as JSON: %v", err)
				}
			}
		}
	})
}
