package taskconfig

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Limits bounds the values of one example.
type Limits struct {
	MaxFieldBytes int // 0 means DefaultLimits.MaxFieldBytes
}

// DefaultLimits are the limits used when a Limits field is zero.
var DefaultLimits = Limits{MaxFieldBytes: 10000}

func (l Limits) maxFieldBytes() int {
	if l.MaxFieldBytes <= 0 {
		return DefaultLimits.MaxFieldBytes
	}
	return l.MaxFieldBytes
}

// mode says how strict a value check is, which depends on who wrote the
// value: an annotator's input must be complete and point into the context;
// a model may answer anything of the right shape, since models can be wrong.
type mode struct {
	required  bool // blank strings and empty lists are missing
	substring bool // a context_string_selection must occur in its context field
}

var (
	contextMode  = mode{}
	inputMode    = mode{required: true, substring: true}
	outputMode   = mode{}
	metadataMode = mode{substring: true}
)

// checker applies a config to the values of one example.
type checker struct {
	c   *Config
	ctx map[string]any
	max int
	ps  problems
}

func (c *Config) checker(ctx map[string]any, lim Limits) *checker {
	return &checker{c: c, ctx: ctx, max: lim.maxFieldBytes()}
}

// CheckContext checks one uploaded context object: every context field
// present, of the right type, strings valid UTF-8 and at most
// lim.MaxFieldBytes. A context string may be empty (Dynabench's hate speech
// and sentiment tasks use empty contexts). Paths look like "context.context".
func (c *Config) CheckContext(ctx map[string]any, lim Limits) []Problem {
	if c == nil {
		return nil
	}
	k := c.checker(ctx, lim)
	for _, f := range c.Context {
		path := joinPath("context", f.Name)
		if v, ok := ctx[f.Name]; ok && v != nil {
			k.value(path, f, v, contextMode)
		} else {
			k.ps.add(path, "required")
		}
	}
	return k.ps
}

// CheckInput checks an annotator's input against the config and its
// context: every input field present and non-empty (strings trimmed), a
// multiclass value in its labels, a multilabel value a list drawn from its
// labels, a context_string_selection a non-empty substring of its context
// field, strings valid UTF-8 and at most lim.MaxFieldBytes, and no unknown
// fields. Paths look like "input.label". It returns every problem.
func (c *Config) CheckInput(ctx, input map[string]any, lim Limits) []Problem {
	if c == nil {
		return nil
	}
	k := c.checker(ctx, lim)
	for _, f := range c.Input {
		path := joinPath("input", f.Name)
		if v := input[f.Name]; isEmpty(v) {
			k.ps.add(path, "required")
		} else {
			k.value(path, f, v, inputMode)
		}
	}
	known := fieldIndex(c.Input)
	for _, name := range sortedKeys(input) {
		if _, ok := known[name]; !ok {
			k.ps.add(joinPath("input", name), "unknown field")
		}
	}
	return k.ps
}

// ModelInput builds what the model receives: the context fields and the
// input fields minus the targets; then, for every v2 model_input entry
// (model field -> source field), the source value is also added under the
// model field name when that name is not already present. A target is
// never added under another name: that would hand the model the answer.
func (c *Config) ModelInput(ctx, input map[string]any) map[string]any {
	out := map[string]any{}
	if c == nil {
		return out
	}
	targets := c.targetSet()
	for _, f := range c.Context {
		if v, ok := ctx[f.Name]; ok {
			out[f.Name] = v
		}
	}
	for _, f := range c.Input {
		if v, ok := input[f.Name]; ok && !targets[f.Name] {
			out[f.Name] = v
		}
	}
	base := make(map[string]any, len(out))
	for k, v := range out {
		base[k] = v
	}
	for _, model := range sortedKeys(c.ModelInputMap) {
		src := c.ModelInputMap[model]
		if _, set := out[model]; set || targets[src] {
			continue
		}
		if v, ok := base[src]; ok {
			out[model] = v
		}
	}
	return out
}

// CheckOutput checks a model's answer: every output field that is a target
// present; a multiclass label in its set; a prob dict over exactly the
// labels with numbers in [0, 1] (a dict that does not sum to 1 is normalised
// in the returned copy, not rejected; all zeros are rejected); a single_prob
// a number in [0, 1]; a context_string_selection a string (not necessarily
// a substring of the context: models can be wrong). It returns a cleaned
// copy of output holding only the config's output fields, and the problems
// (paths like "output.label").
func (c *Config) CheckOutput(ctx, output map[string]any) (map[string]any, []Problem) {
	clean := map[string]any{}
	if c == nil {
		return clean, nil
	}
	// A model's answer is not bounded by the annotators' field limit; the
	// HTTP client bounds the whole response instead.
	k := c.checker(ctx, Limits{MaxFieldBytes: math.MaxInt})
	for _, f := range c.Output {
		path := joinPath("output", f.Name)
		v, ok := output[f.Name]
		if !ok || v == nil {
			if c.IsTarget(f.Name) {
				k.ps.add(path, "required")
			}
			continue
		}
		clean[f.Name] = k.value(path, f, v, outputMode)
	}
	return clean, k.ps
}

// value checks one value against its field and returns the cleaned value
// (the value itself when it has problems).
func (k *checker) value(path string, f Field, v any, m mode) any {
	switch f.Type {
	case TypeMulticlass:
		if label, ok := k.label(path, v, f.Labels); ok {
			return label
		}
	case TypeMultilabel:
		if labels, ok := k.labelSet(path, v, f.Labels, m.required); ok {
			return labels
		}
	case TypeProb:
		return k.prob(path, f, v)
	case TypeContextStringSelection:
		if s, ok := k.text(path, v, m.required); ok && m.substring && s != "" {
			k.selection(path, s, f.ReferenceName)
		}
	default:
		k.text(path, v, m.required)
	}
	return v
}

// text checks a string value and returns it trimmed.
func (k *checker) text(path string, v any, required bool) (string, bool) {
	s, ok := v.(string)
	switch {
	case !ok:
		k.ps.add(path, "must be a string")
	case !utf8.ValidString(s):
		k.ps.add(path, "not valid UTF-8")
	case len(s) > k.max:
		k.ps.add(path, "too long (%d bytes, at most %d)", len(s), k.max)
	case required && strings.TrimSpace(s) == "":
		k.ps.add(path, "required")
	default:
		return strings.TrimSpace(s), true
	}
	return "", false
}

// selection checks that s was selected from the context field ref.
func (k *checker) selection(path, s, ref string) {
	text, ok := k.ctx[ref].(string)
	switch {
	case !ok:
		k.ps.add(path, "the context has no text %q to select from", ref)
	case !strings.Contains(text, s):
		k.ps.add(path, "not found in the context field %q", ref)
	}
}

// label checks that v is one of labels and returns it as the label text.
func (k *checker) label(path string, v any, labels []string) (string, bool) {
	s, ok := scalarText(v)
	s = strings.TrimSpace(s)
	if ok && contains(labels, s) {
		return s, true
	}
	if !ok {
		k.ps.add(path, "must be one of %s", listLabels(labels))
	} else {
		k.ps.add(path, "%s is not one of %s", quoteShort(s), listLabels(labels))
	}
	return "", false
}

// labelSet checks a multilabel value: a list of distinct labels.
func (k *checker) labelSet(path string, v any, labels []string, required bool) ([]any, bool) {
	items, ok := asList(v)
	if !ok {
		k.ps.add(path, "must be a list of labels drawn from %s", listLabels(labels))
		return nil, false
	}
	if required && len(items) == 0 {
		k.ps.add(path, "required")
		return nil, false
	}
	clean := make([]any, 0, len(items))
	valid, seen := stringSet(labels), map[string]bool{}
	before := len(k.ps)
	for i, item := range items {
		s, ok := scalarText(item)
		s = strings.TrimSpace(s)
		switch {
		case !ok || !valid[s]:
			k.label(indexPath(path, i), item, labels) // reports the problem
		case seen[s]:
			k.ps.add(indexPath(path, i), "duplicate label %q", s)
		default:
			seen[s] = true
			clean = append(clean, s)
		}
	}
	return clean, len(k.ps) == before
}

// stringSet indexes a list, so that checking a long list of values against
// a long list of labels stays linear.
func stringSet(list []string) map[string]bool {
	set := make(map[string]bool, len(list))
	for _, s := range list {
		set[s] = true
	}
	return set
}

// fieldIndex indexes fields by name.
func fieldIndex(fields []Field) map[string]Field {
	index := make(map[string]Field, len(fields))
	for _, f := range fields {
		index[f.Name] = f
	}
	return index
}

// prob checks a probability: one number for single_prob, else a mapping
// from every label of the referenced multiclass field to a number.
func (k *checker) prob(path string, f Field, v any) any {
	if f.SingleProb {
		p, ok := toUnit(v)
		if !ok {
			k.ps.add(path, "must be a number in [0, 1]")
			return v
		}
		return p
	}
	m, ok := asMap(v)
	if !ok {
		k.ps.add(path, "must be a mapping from each label to its probability")
		return v
	}
	probs, ok := k.probValues(path, m, k.c.probLabels(f))
	if !ok {
		return v
	}
	return k.normalise(path, probs, v)
}

// probValues reads the numbers of a prob mapping; labels is nil when the
// config does not say which labels to expect (a broken reference).
func (k *checker) probValues(path string, m map[string]any, labels []string) (map[string]float64, bool) {
	before := len(k.ps)
	probs := make(map[string]float64, len(m))
	valid := stringSet(labels)
	for _, key := range sortedKeys(m) {
		p, ok := toUnit(m[key])
		switch {
		case labels != nil && !valid[key]:
			k.ps.add(joinPath(path, key), "not a label of this task")
		case !ok:
			k.ps.add(joinPath(path, key), "must be a number in [0, 1]")
		default:
			probs[key] = p
		}
	}
	for _, l := range labels {
		if _, ok := m[l]; !ok {
			k.ps.add(path, "missing the label %q", l)
		}
	}
	return probs, len(k.ps) == before
}

// normalise rescales probabilities that do not sum to 1, since models
// often round or leave out the softmax; all zeros carry no information.
func (k *checker) normalise(path string, probs map[string]float64, orig any) any {
	var sum float64
	for _, p := range probs {
		sum += p
	}
	if sum == 0 {
		k.ps.add(path, "all probabilities are zero")
		return orig
	}
	clean := make(map[string]any, len(probs))
	for key, p := range probs {
		if math.Abs(sum-1) > 1e-4 {
			p /= sum
		}
		clean[key] = p
	}
	return clean
}

// probLabels returns the labels a prob field is over, or nil if unknown.
func (c *Config) probLabels(f Field) []string {
	for _, fields := range [][]Field{c.Input, c.Context, c.Output} {
		if ref, ok := findField(fields, f.ReferenceName); ok && ref.Type == TypeMulticlass {
			return ref.Labels
		}
	}
	return nil
}

// listLabels renders labels for a message, shortening long lists.
func listLabels(labels []string) string {
	if len(labels) > 10 {
		return fmt.Sprintf("the %d labels of this field", len(labels))
	}
	quoted := make([]string, len(labels))
	for i, l := range labels {
		quoted[i] = fmt.Sprintf("%q", l)
	}
	return strings.Join(quoted, ", ")
}

// quoteShort quotes a value for a message without echoing a huge input.
func quoteShort(s string) string {
	const max = 60
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return fmt.Sprintf("%q", s)
}
