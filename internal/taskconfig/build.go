package taskconfig

import (
	"sort"
	"strings"
)

// topLevelKeys are the keys a config may have. Those marked false are known
// Dynabench keys that we keep in Raw but do not interpret; they are not
// reported as unknown.
var topLevelKeys = map[string]bool{
	// v1 ("dynatask")
	"goal_message": true, "content_warning": true, "context": true, "input": true,
	"output": true, "metadata": true, "model_wrong_metric": true,
	"aggregation_metric": true, "perf_metric": true, "delta_metrics": true,
	"train_file_metric": false,
	// v2 (the newer UI)
	"goal": true, "user_input": true, "model_input": true, "model_output": true,
	"model_evaluation_metric": true,
	"response_fields":         false, "required_fields": false, "creation_samples_title": false,
	"user_input_group_by": false, "cast_output": false, "external_validator": false,
	"validation_user_input": false, "validation_context": false, "validation_options": false,
	"evaluation": false, "submit_config": false, "leaderboard": false,
	"general_instructions": false,
}

// section says where a field was declared; some rules depend on it.
type section int

const (
	inContext section = iota
	inInput
	inOutput
	inCreate
	inValidate
)

// placedField is a field with the path it was declared at, so that rules
// checked after the whole document is read can still point at it.
type placedField struct {
	Field
	path string
	sec  section
}

// builder turns a decoded document into a Config, recording every problem.
type builder struct {
	doc    map[string]any
	rep    *Report
	cfg    *Config
	placed []placedField

	// Fields synthesised from v2 keys, merged into Input in this order.
	v2User, v2Select, v2Goal []placedField
	contextAlias             map[string]string // v2 context model name -> context field
}

// build normalises a decoded document. It returns nil only when the document
// is not a mapping.
func build(src string, root any, rep *Report) *Config {
	doc, ok := root.(map[string]any)
	if root == nil {
		rep.problem("", "the config is empty")
		return nil
	}
	if !ok {
		rep.problem("", "the config must be a mapping of keys to values, not %s", describe(root))
		return nil
	}
	b := &builder{doc: doc, rep: rep, contextAlias: map[string]string{}}
	b.cfg = &Config{Source: src, Raw: doc, ContextType: DefaultContextType}
	b.unknownKeys(doc, "", topLevelKeys)
	// In dependency order: input needs context and the v2 fields, output
	// needs input, the metrics need the targets and the output.
	for _, step := range []func(){
		b.texts, b.context, b.goal, b.userInput, b.input, b.output, b.metadata,
		b.modelInput, b.predictionField, b.modelWrong, b.perf, b.deltas,
		b.aggregation, b.checkReferences,
	} {
		step()
	}
	return b.cfg
}

func describe(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return "a single value"
}

// unknownKeys warns about keys outside known, in a stable order.
func (b *builder) unknownKeys(m map[string]any, path string, known map[string]bool) {
	for _, k := range sortedKeys(m) {
		if _, ok := known[k]; !ok {
			b.rep.warn(joinPath(path, k), "unknown key, kept")
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// text reads an optional scalar as a string; a list or mapping is a problem.
func (b *builder) text(m map[string]any, key, path string) string {
	v, ok := m[key]
	if !ok || v == nil {
		return ""
	}
	s, ok := scalarText(v)
	if !ok {
		b.rep.problem(joinPath(path, key), "must be a string")
	}
	return s
}

// flag reads an optional bool; present reports whether it was given.
func (b *builder) flag(m map[string]any, key, path string) (value, present bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return false, false
	}
	value, ok = toBool(v)
	if !ok {
		b.rep.problem(joinPath(path, key), "must be true or false")
	}
	return value, ok
}

// tooMany reports (as a problem) a list or mapping longer than limit.
// Real configs have a handful of fields; the limit keeps the cross-checks,
// some of which compare every field with every other, cheap.
func (b *builder) tooMany(path string, n, limit int) bool {
	if n <= limit {
		return false
	}
	b.rep.problem(path, "too many entries (%d, at most %d)", n, limit)
	return true
}

// mapping returns the mapping under key, or nil (with a problem if the key
// holds something else).
func (b *builder) mapping(m map[string]any, key, path string) map[string]any {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	sub, ok := asMap(v)
	if !ok {
		b.rep.problem(joinPath(path, key), "must be a mapping")
	}
	if b.tooMany(joinPath(path, key), len(sub), maxEntries) {
		return nil
	}
	return sub
}

// list returns the list under key, or nil (with a problem if the key holds
// something else).
func (b *builder) list(m map[string]any, key, path string) []any {
	v, ok := m[key]
	if !ok || v == nil {
		return nil
	}
	l, ok := asList(v)
	if !ok {
		b.rep.problem(joinPath(path, key), "must be a list")
	}
	if b.tooMany(joinPath(path, key), len(l), maxEntries) {
		return nil
	}
	return l
}

// texts reads the free-text keys. goal_message (v1) wins over goal.text (v2).
func (b *builder) texts() {
	b.cfg.GoalMessage = strings.TrimSpace(b.text(b.doc, "goal_message", ""))
	b.cfg.ContentWarning = strings.TrimSpace(b.text(b.doc, "content_warning", ""))
}

// place records a field for the reference checks and returns it.
func (b *builder) place(f Field, path string, sec section) Field {
	b.placed = append(b.placed, placedField{Field: f, path: path, sec: sec})
	return f
}
