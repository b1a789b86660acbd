package taskconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits on a config document. A real config is a few kilobytes with a
// nesting depth under ten; these stop a hostile one from costing memory or
// stack, including a YAML alias bomb (a few lines that expand to millions of
// values).
const (
	MaxSourceBytes = 1 << 20 // larger documents are rejected as "too large"
	MaxDepth       = 64      // deeper nesting is rejected
	maxValues      = 100000  // values after expanding aliases
	maxEntries     = 1000    // entries of one list or mapping in a config section (fields, metrics, ...)
	maxLabels      = 10000   // labels of one field
)

// Parse reads a YAML or JSON config. cfg is nil only if the document is
// unusable (not a mapping, syntax error, too large or too deep); otherwise
// cfg is returned even with problems so callers can show them. Never panics.
func Parse(src []byte) (*Config, *Report) {
	rep := &Report{}
	if len(src) > MaxSourceBytes {
		rep.problem("", "the config is too large (%d bytes, at most %d)", len(src), MaxSourceBytes)
		return nil, rep
	}
	root, ok := decodeSource(src, rep)
	if !ok {
		return nil, rep
	}
	return build(string(src), root, rep), rep
}

// ParseMap is Parse for an already-decoded JSON object (API clients may send
// the config as JSON). Source is set to its YAML rendering, so what is stored
// reads like any other config.
func ParseMap(m map[string]any) (*Config, *Report) {
	rep := &Report{}
	d := &decoder{rep: rep, budget: maxValues}
	root := d.goValue(reflect.ValueOf(m), "", 0)
	if !d.finish() {
		return nil, rep
	}
	src, err := renderYAML(root)
	if err != nil {
		rep.problem("", "cannot render the config as YAML: %v", err)
	}
	return build(src, root, rep), rep
}

// decodeSource turns the text into plain Go values. JSON is tried first when
// the text looks like a JSON object, because YAML parsers stumble on some
// valid JSON (tabs as indentation, for instance); anything else is YAML.
func decodeSource(src []byte, rep *Report) (any, bool) {
	if looksLikeJSON(src) {
		if v, ok := decodeJSON(src); ok {
			d := &decoder{rep: rep, budget: maxValues}
			root := d.goValue(reflect.ValueOf(v), "", 0)
			return root, d.finish()
		}
	}
	return decodeYAML(src, rep)
}

func looksLikeJSON(src []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(src, " \t\r\n\ufeff"), []byte("{"))
}

// decodeJSON decodes exactly one JSON value, keeping numbers exact.
func decodeJSON(src []byte) (v any, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	var rest any
	return v, dec.Decode(&rest) == io.EOF
}

func decodeYAML(src []byte, rep *Report) (any, bool) {
	var doc yaml.Node
	var err error
	if panicked := safely(func() { err = yaml.Unmarshal(src, &doc) }); panicked {
		err = fmt.Errorf("the YAML parser failed on this document")
	}
	if err != nil {
		rep.problem("", "invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, false
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		rep.problem("", "the config is empty")
		return nil, false
	}
	d := &decoder{rep: rep, budget: maxValues}
	root := d.node(doc.Content[0], "", 0)
	return root, d.finish()
}

// safely runs a call into third-party code and reports whether it panicked.
// Only library calls are wrapped, so that fuzzing still finds our own bugs.
func safely(call func()) (panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	call()
	return false
}

func renderYAML(v any) (string, error) {
	var out []byte
	var err error
	if safely(func() { out, err = yaml.Marshal(v) }) {
		return "", fmt.Errorf("the YAML encoder failed")
	}
	return string(out), err
}

// decoder converts a YAML node tree or arbitrary Go values into the plain
// values the rest of the package reads: nil, bool, int64, float64, string,
// []any and map[string]any. It enforces MaxDepth and maxValues.
type decoder struct {
	rep     *Report
	budget  int
	tooDeep bool
	tooBig  bool
}

// finish reports the limits that were hit; it returns false when the
// document must be rejected.
func (d *decoder) finish() bool {
	if d.tooDeep {
		d.rep.problem("", "the config is nested deeper than %d levels", MaxDepth)
	}
	if d.tooBig {
		d.rep.problem("", "the config is too large (more than %d values after expanding aliases)", maxValues)
	}
	return !d.tooDeep && !d.tooBig
}

// enter accounts for one more value at depth and reports whether decoding
// may go on.
func (d *decoder) enter(depth int) bool {
	if d.tooDeep || d.tooBig {
		return false
	}
	if depth > MaxDepth {
		d.tooDeep = true
		return false
	}
	d.budget--
	if d.budget < 0 {
		d.tooBig = true
		return false
	}
	return true
}

func (d *decoder) node(n *yaml.Node, path string, depth int) any {
	if n == nil || !d.enter(depth) {
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return d.node(n.Content[0], path, depth)
	case yaml.AliasNode:
		// An alias stands for its anchor at the same depth; a cycle still
		// ends because every mapping or list below it goes one level deeper.
		return d.node(n.Alias, path, depth)
	case yaml.ScalarNode:
		return scalarValue(n)
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			list = append(list, d.node(item, indexPath(path, i), depth+1))
		}
		return list
	case yaml.MappingNode:
		return d.mapping(n, path, depth)
	}
	return nil
}

func (d *decoder) mapping(n *yaml.Node, path string, depth int) map[string]any {
	m := make(map[string]any, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		key, ok := d.key(k, path)
		if !ok {
			continue
		}
		if _, dup := m[key]; dup {
			d.rep.problem(joinPath(path, key), "duplicate key")
		}
		m[key] = d.node(v, joinPath(path, key), depth+1)
	}
	// Merged keys never override the mapping's own keys, as in YAML.
	for _, v := range merges {
		d.merge(m, v, path, depth)
	}
	return m
}

// merge applies a YAML merge key ("<<: *anchor" or "<<: [*a, *b]").
func (d *decoder) merge(m map[string]any, v *yaml.Node, path string, depth int) {
	for v != nil && v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	sources := []*yaml.Node{v}
	if v != nil && v.Kind == yaml.SequenceNode {
		sources = v.Content
	}
	for _, s := range sources {
		src, ok := d.node(s, path, depth).(map[string]any)
		if !ok {
			d.rep.problem(joinPath(path, "<<"), "must be a mapping or a list of mappings")
			continue
		}
		for k, x := range src {
			if _, set := m[k]; !set {
				m[k] = x
			}
		}
	}
}

func (d *decoder) key(k *yaml.Node, path string) (string, bool) {
	for k != nil && k.Kind == yaml.AliasNode {
		k = k.Alias
	}
	if k == nil || k.Kind != yaml.ScalarNode {
		d.rep.problem(path, "a key must be a string, not a list or mapping")
		return "", false
	}
	if k.ShortTag() != "!!str" {
		d.rep.problem(joinPath(path, k.Value), "key %q is not a string (quote it)", k.Value)
		return "", false
	}
	return k.Value, true
}

// scalarValue decodes a YAML scalar to nil, bool, int64, float64 or string.
func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!str", "!!binary":
		return n.Value
	case "!!null":
		return nil
	}
	var v any
	var err error
	if safely(func() { err = n.Decode(&v) }) || err != nil {
		return n.Value
	}
	switch x := v.(type) {
	case nil, bool, string, float64, int64:
		return x
	case int:
		return int64(x)
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x)
		}
		return float64(x)
	}
	// Timestamps and other exotic scalars are kept as written.
	return n.Value
}

// goValue converts an arbitrary Go value, as ParseMap or encoding/json gives
// it, to the plain values used everywhere else. Values with no meaning in a
// config (functions, channels, structs) are problems, not panics.
func (d *decoder) goValue(v reflect.Value, path string, depth int) any {
	if !v.IsValid() || !d.enter(depth) {
		return nil
	}
	if n, ok := v.Interface().(json.Number); ok {
		return numberValue(n)
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return d.goValue(v.Elem(), path, depth)
	case reflect.Bool:
		return v.Bool()
	case reflect.String:
		return d.stringValue(v.String(), path)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := v.Uint(); u <= math.MaxInt64 {
			return int64(u)
		}
		return float64(v.Uint())
	case reflect.Float32, reflect.Float64:
		return v.Float()
	case reflect.Slice, reflect.Array:
		return d.goList(v, path, depth)
	case reflect.Map:
		return d.goMap(v, path, depth)
	}
	d.rep.problem(path, "unsupported value of type %s", v.Type())
	return nil
}

func (d *decoder) stringValue(s, path string) string {
	if !utf8.ValidString(s) {
		d.rep.problem(path, "not valid UTF-8")
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

func (d *decoder) goList(v reflect.Value, path string, depth int) any {
	if v.Kind() == reflect.Slice && v.IsNil() {
		return nil
	}
	list := make([]any, 0, v.Len())
	for i := 0; i < v.Len() && !d.tooDeep && !d.tooBig; i++ {
		list = append(list, d.goValue(v.Index(i), indexPath(path, i), depth+1))
	}
	return list
}

func (d *decoder) goMap(v reflect.Value, path string, depth int) any {
	if v.IsNil() {
		return nil
	}
	if v.Type().Key().Kind() != reflect.String {
		d.rep.problem(path, "keys must be strings, not %s", v.Type().Key())
		return nil
	}
	m := make(map[string]any, v.Len())
	iter := v.MapRange()
	for iter.Next() && !d.tooDeep && !d.tooBig {
		key := d.stringValue(iter.Key().String(), path)
		m[key] = d.goValue(iter.Value(), joinPath(path, key), depth+1)
	}
	return m
}

// numberValue keeps integers as int64 and everything else as float64.
func numberValue(n json.Number) any {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(string(n), 64); err == nil {
		return f
	}
	return string(n)
}
