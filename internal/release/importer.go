package release

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Item is one imported example, in the task's field names: a dataset row (uid, the config fields, tags)
// or, with a context and an input, an example of a past round.
type Item struct {
	UID    string         `json:"uid"`
	Fields map[string]any `json:"fields"`
	Tags   []string       `json:"tags,omitempty"`
	// Metadata holds the source fields the mapping did not name, so nothing is lost.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Batch is what a reader returns: the items in file order and what it skipped, by reason.
type Batch struct {
	Items   []Item
	Skipped map[string]int
}

// Mapping renames a source's fields and labels to the task's. Its entries are merged over the reader's
// defaults, documented on each reader; mapping a source field to "" drops it.
type Mapping struct {
	Fields map[string]string // source field → task field
	Labels map[string]string // source label → task label
}

// Limits bound what a reader accepts; zero fields take DefaultLimits'.
type Limits struct {
	Line  int   // bytes per JSONL line
	Field int   // bytes per string field
	Items int   // items per file
	Bytes int64 // bytes per whole-document file (nested SQuAD)
}

// DefaultLimits: 1 MiB lines, 64 KiB fields (a SQuAD passage is well under), a million items, 512 MiB
// documents.
var DefaultLimits = Limits{Line: 1 << 20, Field: 64 << 10, Items: 1_000_000, Bytes: 512 << 20}

// ImportOptions configure the readers.
type ImportOptions struct {
	Mapping Mapping
	Limits  Limits
	// SkipUnlabelled skips rows without a gold label (DynaSent's rows where no majority formed) instead
	// of failing on them.
	SkipUnlabelled bool
}

// ImportError names the place of a bad row: a line of a JSONL file, or a path in a JSON document, and the
// field. It matches ErrMalformed or ErrTooLarge.
type ImportError struct {
	Line  int    // 1-based; 0 in a whole-document file
	Path  string // e.g. data[0].paragraphs[2].qas[1], in a whole-document file
	Field string
	Msg   string
	Kind  error // ErrMalformed or ErrTooLarge
}

func (e *ImportError) Error() string {
	var b strings.Builder
	b.WriteString("import: ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Path != "" {
		fmt.Fprintf(&b, "%s: ", e.Path)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is matches the error's kind.
func (e *ImportError) Is(target error) bool { return target == e.Kind }

// where is the position of a row, for errors.
type where struct {
	line int
	path string
}

func (w where) fail(field, format string, args ...any) error {
	return &ImportError{Line: w.line, Path: w.path, Field: field, Msg: fmt.Sprintf(format, args...), Kind: ErrMalformed}
}

func (w where) tooLarge(field, format string, args ...any) error {
	return &ImportError{Line: w.line, Path: w.path, Field: field, Msg: fmt.Sprintf(format, args...), Kind: ErrTooLarge}
}

// scheme is how one published format maps onto task fields.
type scheme struct {
	uid      string            // source field holding the uid; "" or absent: "line-<n>"
	required []string          // source fields that must be non-empty strings (the label may be a number)
	label    string            // source field holding the label, mapped through labels
	fields   map[string]string // default source → task field
	labels   map[string]string // default label map; nil: labels pass through
}

// resolve merges the caller's mapping over the scheme's defaults and checks it.
func (s scheme) resolve(m Mapping) (fields, labels map[string]string, err error) {
	fields = maps.Clone(s.fields)
	maps.Copy(fields, m.Fields)
	seen := map[string]string{}
	for src, dst := range fields {
		if dst == "" {
			delete(fields, src)
			continue
		}
		if other, dup := seen[dst]; dup {
			return nil, nil, invalid("mapping.fields", "%q and %q both map to %q", other, src, dst)
		}
		seen[dst] = src
	}
	if s.labels != nil || m.Labels != nil {
		labels = maps.Clone(s.labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, m.Labels)
	}
	return fields, labels, nil
}

func (o ImportOptions) limits() Limits {
	l := o.Limits
	if l.Line <= 0 {
		l.Line = DefaultLimits.Line
	}
	if l.Field <= 0 {
		l.Field = DefaultLimits.Field
	}
	if l.Items <= 0 {
		l.Items = DefaultLimits.Items
	}
	if l.Bytes <= 0 {
		l.Bytes = DefaultLimits.Bytes
	}
	return l
}

// eachLine calls fn with every non-blank line of a JSONL stream decoded as an object.
func eachLine(r io.Reader, lim Limits, fn func(w where, obj map[string]any) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), lim.Line)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		w := where{line: n}
		if !utf8.Valid(line) {
			return w.fail("", "not valid UTF-8")
		}
		var obj map[string]any
		if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
			return w.fail("", "not a JSON object: %s", jsonProblem(err))
		}
		if err := fn(w, obj); err != nil {
			return err
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return where{line: n + 1}.tooLarge("", "line longer than %d bytes", lim.Line)
	}
	if sc.Err() != nil {
		return fmt.Errorf("import: line %d: %w", n+1, sc.Err())
	}
	return nil
}

func jsonProblem(err error) string {
	if err == nil {
		return "null"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// readFlat reads a JSONL file whose rows map field by field (ANLI, DynaSent).
func readFlat(r io.Reader, o ImportOptions, s scheme) (*Batch, error) {
	fields, labels, err := s.resolve(o.Mapping)
	if err != nil {
		return nil, err
	}
	lim := o.limits()
	b := &Batch{Skipped: map[string]int{}}
	err = eachLine(r, lim, func(w where, obj map[string]any) error {
		if v, ok := obj[s.label]; s.label != "" && (!ok || v == nil) && o.SkipUnlabelled {
			b.Skipped["no label"]++
			return nil
		}
		it, err := flatItem(w, obj, s, fields, labels, lim)
		if err != nil {
			return err
		}
		if len(b.Items) == lim.Items {
			return w.tooLarge("", "more than %d items", lim.Items)
		}
		b.Items = append(b.Items, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

func flatItem(w where, obj map[string]any, s scheme, fields, labels map[string]string, lim Limits) (Item, error) {
	for _, f := range s.required {
		if f == s.label {
			continue
		}
		if err := requireText(w, obj, f, lim); err != nil {
			return Item{}, err
		}
	}
	if v, ok := obj[s.label]; s.label != "" && (!ok || v == nil) {
		return Item{}, w.fail(s.label, "missing")
	}
	it := Item{UID: "line-" + strconv.Itoa(w.line), Fields: map[string]any{}}
	if s.uid != "" && obj[s.uid] != nil {
		uid, err := scalarText(w, obj[s.uid], s.uid)
		if err != nil {
			return Item{}, err
		}
		it.UID = uid
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		v := obj[k]
		if err := checkSize(w, k, v, lim); err != nil {
			return Item{}, err
		}
		switch {
		case k == s.uid:
		case k == s.label:
			l, err := mapLabel(w, k, v, labels)
			if err != nil {
				return Item{}, err
			}
			if dst, ok := fields[k]; ok {
				it.Fields[dst] = l
			}
		case k == "tags":
			tags, err := stringList(w, k, v)
			if err != nil {
				return Item{}, err
			}
			it.Tags = tags
		default:
			if dst, ok := fields[k]; ok {
				it.Fields[dst] = v
			} else {
				if it.Metadata == nil {
					it.Metadata = map[string]any{}
				}
				it.Metadata[k] = v
			}
		}
	}
	return it, nil
}

func requireText(w where, obj map[string]any, f string, lim Limits) error {
	v, ok := obj[f]
	if !ok || v == nil {
		return w.fail(f, "missing")
	}
	s, ok := v.(string)
	if !ok {
		return w.fail(f, "must be a string, is %s", typeName(v))
	}
	if strings.TrimSpace(s) == "" {
		return w.fail(f, "is empty")
	}
	if len(s) > lim.Field {
		return w.tooLarge(f, "longer than %d bytes", lim.Field)
	}
	return nil
}

// checkSize bounds every string in a value, however nested.
func checkSize(w where, field string, v any, lim Limits) error {
	switch v := v.(type) {
	case string:
		if len(v) > lim.Field {
			return w.tooLarge(field, "longer than %d bytes", lim.Field)
		}
	case []any:
		for _, e := range v {
			if err := checkSize(w, field, e, lim); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range v {
			if err := checkSize(w, field, e, lim); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapLabel maps a label (a string, or an integer class index as in Hugging Face's copies).
func mapLabel(w where, field string, v any, labels map[string]string) (string, error) {
	if v == nil {
		return "", w.fail(field, "missing")
	}
	l, err := scalarText(w, v, field)
	if err != nil {
		return "", err
	}
	if labels == nil {
		return l, nil
	}
	if to, ok := labels[l]; ok {
		return to, nil
	}
	known := slices.Sorted(maps.Keys(labels))
	return "", w.fail(field, "unknown label %q (known: %s; add it to the label mapping)", l, strings.Join(known, ", "))
}

// scalarText renders a string or an integer as text.
func scalarText(w where, v any, field string) (string, error) {
	switch v := v.(type) {
	case string:
		if v == "" {
			return "", w.fail(field, "is empty")
		}
		return v, nil
	case float64:
		if v == float64(int64(v)) {
			return strconv.FormatInt(int64(v), 10), nil
		}
	}
	return "", w.fail(field, "must be a string or an integer, is %s", typeName(v))
}

func stringList(w where, field string, v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, w.fail(field, "must be a list of strings, is %s", typeName(v))
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, w.fail(fmt.Sprintf("%s[%d]", field, i), "must be a string, is %s", typeName(e))
		}
		out = append(out, s)
	}
	return out, nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
