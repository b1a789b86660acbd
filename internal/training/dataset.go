package training

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/builtin"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// Example is one labelled row: what the model reads and the answer it should give.
type Example struct {
	// Key identifies the row stably across trainings ("seed:12", "example:345", "uid:abc",
	// "row:<hash>"); it alone decides the row's side of the held-out split.
	Key string
	// Input is the model's input: the config's context fields and non-target input fields.
	Input map[string]any
	// Label is the target: a label of a multiclass task, the answer text of a QA task.
	Label string
}

// Source is one named group of rows: a seed set, a file, a round.
type Source struct {
	Name     string
	Examples []Example
	// Skipped counts rows left out because their target is no longer valid under the config (a label
	// renamed since the example was written, say).
	Skipped int
}

// Dataset is everything one training learns from (less the held-out rows), in source order.
type Dataset struct {
	Sources []Source
}

// Examples returns every row of every source, in order.
func (d Dataset) Examples() []Example {
	var out []Example
	for _, s := range d.Sources {
		out = append(out, s.Examples...)
	}
	return out
}

// Limits on what a dataset file may hold.
const (
	MaxLineBytes  = 1 << 20
	MaxFileRows   = 2_000_000
	maxFieldBytes = 100_000 // what the built-in models read of one field
)

// SeedSource turns a demo task's seed set (model-input fields and gold labels) into a source. Its
// keys are "seed:<index>". A seed row the config does not accept is an error: seed sets are ours.
func SeedSource(name string, cfg *taskconfig.Config, seed []builtin.TrainingExample) (Source, error) {
	target, ok := primaryTarget(cfg)
	if !ok {
		return Source{}, dynabench.Errorf(dynabench.EINVALID, "the task config has no target field")
	}
	src := Source{Name: name}
	for i, r := range seed {
		label, err := targetValue(target, r.Label)
		if err != nil {
			return Source{}, fmt.Errorf("training: %s row %d: %w", name, i+1, err)
		}
		src.Examples = append(src.Examples, Example{Key: fmt.Sprintf("seed:%d", i), Input: cfg.ModelInput(r.Input, r.Input), Label: label})
	}
	return src, nil
}

// ReadJSONL reads a dataset file, one JSON object per line (blank lines skipped), in either shape:
//
//   - Dynaboard's: the config's context and input fields at the top level, the target among them, an
//     optional "uid" and "tags": {"uid": "1", "context": "...", "hypothesis": "...", "label": "neutral"};
//   - the demo seed sets': {"input": {model-input fields}, "label": "..."} (the label is the target).
//
// Every row is checked against the config as an annotator's example would be (labels in the label
// set, an answer inside its context); the first bad row fails the file with its line number, as
// EINVALID. A row's key is "uid:<uid>", or "row:<hash of its content>" when it has no uid.
func ReadJSONL(name string, cfg *taskconfig.Config, r io.Reader) (Source, error) {
	target, ok := primaryTarget(cfg)
	if !ok {
		return Source{}, dynabench.Errorf(dynabench.EINVALID, "the task config has no target field")
	}
	src := Source{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if len(src.Examples) >= MaxFileRows {
			return Source{}, dynabench.Errorf(dynabench.ETOOLARGE, "%s: more than %d rows", name, MaxFileRows)
		}
		ex, err := parseRow(cfg, target, sc.Bytes())
		if err != nil {
			return Source{}, rowError(name, line, err)
		}
		src.Examples = append(src.Examples, ex)
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return Source{}, dynabench.Errorf(dynabench.ETOOLARGE, "%s: a line is longer than %d bytes", name, MaxLineBytes)
		}
		return Source{}, fmt.Errorf("training: read %s: %w", name, err)
	}
	return src, nil
}

func rowError(name string, line int, err error) error {
	msg := err.Error()
	if de, ok := err.(*dynabench.Error); ok {
		msg = de.Message
		if de.Field != "" {
			msg = de.Field + ": " + msg
		}
	}
	return &dynabench.Error{Code: dynabench.EINVALID, Field: fmt.Sprintf("%s:%d", name, line), Message: msg}
}

// parseRow reads and checks one dataset line.
func parseRow(cfg *taskconfig.Config, target taskconfig.Field, line []byte) (Example, error) {
	var row map[string]any
	if err := json.Unmarshal(line, &row); err != nil || row == nil {
		return Example{}, dynabench.Errorf(dynabench.EMALFORMED, "not a JSON object")
	}
	uid, _ := row["uid"].(string)
	if n, ok := row["uid"].(float64); ok {
		uid = strconv.FormatFloat(n, 'f', -1, 64)
	}
	if in, ok := row["input"].(map[string]any); ok && !hasField(cfg, "input") {
		flat := map[string]any{} // the seed shape: model inputs plus the label as the target
		for k, v := range in {
			flat[k] = v
		}
		flat[target.Name] = row["label"]
		row = flat
	}
	ctx, input := pick(row, cfg.Context), pick(row, cfg.Input)
	if err := checkRow(cfg, ctx, input); err != nil {
		return Example{}, err
	}
	label, err := targetValue(target, input[target.Name])
	if err != nil {
		return Example{}, err
	}
	ex := Example{Input: cfg.ModelInput(ctx, input), Label: label}
	if uid != "" {
		ex.Key = "uid:" + uid
	} else {
		ex.Key = "row:" + contentHash(ex)
	}
	return ex, nil
}

// checkRow applies the config's checks to one row. A missing context field is allowed (seed sets
// for sentiment carry none), so it is checked as empty and left out of the model's input.
func checkRow(cfg *taskconfig.Config, ctx, input map[string]any) error {
	filled := map[string]any{}
	for _, f := range cfg.Context {
		if v, ok := ctx[f.Name]; ok && v != nil {
			filled[f.Name] = v
		} else if f.Type == taskconfig.TypeString {
			filled[f.Name] = ""
		}
	}
	lim := taskconfig.Limits{MaxFieldBytes: maxFieldBytes}
	problems := append(cfg.CheckContext(filled, lim), cfg.CheckInput(filled, input, lim)...)
	if len(problems) == 0 {
		return nil
	}
	return dynabench.FieldErrorf(dynabench.EINVALID, problems[0].Path, "%s", problems[0].Message)
}

func hasField(cfg *taskconfig.Config, name string) bool {
	_, in := cfg.InputField(name)
	_, ctx := cfg.ContextField(name)
	return in || ctx
}

// pick returns the row's values of the fields.
func pick(row map[string]any, fields []taskconfig.Field) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		if v, ok := row[f.Name]; ok {
			out[f.Name] = v
		}
	}
	return out
}

// targetValue reads a target value as the model's label: a label of the set, or an answer text (the
// first of a list of acceptable answers).
func targetValue(target taskconfig.Field, v any) (string, error) {
	if list, ok := v.([]any); ok && target.Type == taskconfig.TypeContextStringSelection && len(list) > 0 {
		v = list[0]
	}
	s, ok := v.(string)
	s = strings.TrimSpace(s)
	switch {
	case !ok || s == "":
		return "", dynabench.FieldErrorf(dynabench.EINVALID, target.Name, "required: a non-empty string")
	case target.Type == taskconfig.TypeMulticlass && !slices.Contains(target.Labels, s):
		return "", dynabench.FieldErrorf(dynabench.EINVALID, target.Name, "%q is not one of %q", s, target.Labels)
	}
	return s, nil
}

// RoundSources reads the verified examples of the rounds, one source per round named "round:<n>",
// keyed "example:<id>", in id order. Each example's model input is rebuilt from its context and
// input as the model in the loop received it. progress, when not nil, is called with StageLoading and
// the running count of examples read (total -1: unknown until the end).
func RoundSources(ctx context.Context, store dynabench.Store, cfg *taskconfig.Config, rounds []*dynabench.Round,
	progress Progress) ([]Source, error) {
	target, ok := primaryTarget(cfg)
	if !ok {
		return nil, dynabench.Errorf(dynabench.EINVALID, "the task config has no target field")
	}
	contexts := map[int64]map[string]any{}
	var out []Source
	read := 0
	for _, r := range rounds {
		src := Source{Name: fmt.Sprintf("round:%d", r.Number)}
		f := dynabench.ExampleFilter{TaskID: r.TaskID, RoundIDs: []int64{r.ID}, Status: dynabench.StatusVerified}
		for {
			page, err := store.FindExamples(ctx, f)
			if err != nil {
				return nil, err
			}
			for _, e := range page {
				if err := addRoundExample(ctx, store, cfg, target, contexts, &src, e); err != nil {
					return nil, err
				}
			}
			read += len(page)
			report(progress, StageLoading, read, -1)
			if len(page) < dynabench.MaxExamplesPage {
				break
			}
			f.AfterID = page[len(page)-1].ID
		}
		out = append(out, src)
	}
	return out, nil
}

func addRoundExample(ctx context.Context, store dynabench.Store, cfg *taskconfig.Config, target taskconfig.Field,
	contexts map[int64]map[string]any, src *Source, e *dynabench.Example) error {
	data, ok := contexts[e.ContextID]
	if !ok {
		c, err := store.FindContextByID(ctx, e.ContextID)
		if err != nil {
			return fmt.Errorf("training: context %d of example %d: %w", e.ContextID, e.ID, err)
		}
		data = c.Data
		contexts[e.ContextID] = data
	}
	label, err := targetValue(target, e.Input[target.Name])
	if err != nil {
		src.Skipped++
		return nil
	}
	src.Examples = append(src.Examples, Example{Key: fmt.Sprintf("example:%d", e.ID), Input: cfg.ModelInput(data, e.Input), Label: label})
	return nil
}

// contentHash is the hex SHA-256 of the example's canonical JSON (map keys sorted), less its key.
func contentHash(ex Example) string {
	h := sha256.New()
	writeCanonical(h, Example{Input: ex.Input, Label: ex.Label})
	return hex.EncodeToString(h.Sum(nil))
}

// writeCanonical writes one example as a JSON line; encoding/json sorts map keys, so the same
// example always gives the same bytes.
func writeCanonical(w io.Writer, ex Example) {
	b, _ := json.Marshal(struct {
		Key   string         `json:"key"`
		Input map[string]any `json:"input"`
		Label string         `json:"label"`
	}{ex.Key, ex.Input, ex.Label})
	w.Write(append(b, '\n'))
}

// sourceHash is the hex SHA-256 of a source's examples as canonical JSON lines, in order.
func sourceHash(s Source) string {
	h := sha256.New()
	for _, ex := range s.Examples {
		writeCanonical(h, ex)
	}
	return hex.EncodeToString(h.Sum(nil))
}
