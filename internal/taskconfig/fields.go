package taskconfig

import (
	"fmt"
	"strings"
)

// fieldKeys are the keys an annotation object may have.
var fieldKeys = map[string]bool{
	"name": true, "type": true, "placeholder": true, "display_name": true,
	"labels": true, "reference_name": true, "single_prob": true, "as_goal_message": true,
	"model_wrong_condition": true, "validated_label_condition": true,
}

var fieldTypes = []string{
	TypeString, TypeMulticlass, TypeMultilabel, TypeProb,
	TypeContextStringSelection, TypeImage, TypeAudio,
}

var validationLabels = []string{LabelCorrect, LabelIncorrect, LabelFlagged}

// fieldList reads a v1 list of annotation objects. In output, an object
// with no type is an abbreviation, resolved later; abbreviated reports
// which ones are.
func (b *builder) fieldList(v any, path string, sec section) (fields []Field, abbreviated []bool) {
	if v == nil {
		return nil, nil
	}
	items, ok := asList(v)
	if !ok {
		b.rep.problem(path, "must be a list of fields")
		return nil, nil
	}
	if b.tooMany(path, len(items), maxEntries) {
		return nil, nil
	}
	names := map[string]bool{}
	for i, item := range items {
		p := indexPath(path, i)
		f, abbr, ok := b.field(item, p, sec)
		if !ok {
			continue
		}
		if names[f.Name] {
			b.rep.problem(joinPath(p, "name"), "duplicate field name %q", f.Name)
			continue
		}
		names[f.Name] = true
		fields = append(fields, f)
		abbreviated = append(abbreviated, abbr)
	}
	return fields, abbreviated
}

// field reads one annotation object. ok is false when it has no usable name.
func (b *builder) field(v any, path string, sec section) (f Field, abbreviated, ok bool) {
	m, isMap := asMap(v)
	if !isMap {
		b.rep.problem(path, "must be a mapping with at least a name and a type")
		return f, false, false
	}
	b.unknownKeys(m, path, fieldKeys)
	f.Name = strings.TrimSpace(b.text(m, "name", path))
	f.Type = b.text(m, "type", path)
	f.Placeholder = b.text(m, "placeholder", path)
	f.DisplayName = b.text(m, "display_name", path)
	f.ReferenceName = strings.TrimSpace(b.text(m, "reference_name", path))
	f.SingleProb, _ = b.flag(m, "single_prob", path)
	f.AsGoalMessage, _ = b.flag(m, "as_goal_message", path)
	if cond, present := b.flag(m, "model_wrong_condition", path); present {
		f.ModelWrongCondition = &cond
	}
	f.ValidatedLabelCondition = b.validatedLabelCondition(m, path)
	abbreviated = b.fieldType(&f, path, sec)
	b.fieldLabels(&f, m, path)
	if f.Name == "" {
		b.rep.problem(joinPath(path, "name"), "required")
		return f, false, false
	}
	return f, abbreviated, true
}

// fieldType checks the type. An output object without one is an
// abbreviation of the input or context field with the same name.
func (b *builder) fieldType(f *Field, path string, sec section) (abbreviated bool) {
	switch {
	case f.Type == "" && sec == inOutput:
		return true
	case f.Type == "":
		b.rep.problem(joinPath(path, "type"), "required")
	case !contains(fieldTypes, f.Type):
		b.rep.problem(joinPath(path, "type"), "unknown type %q (want one of %s)", f.Type, strings.Join(fieldTypes, ", "))
	case f.Type == TypeProb && (sec == inContext || sec == inInput):
		b.rep.problem(joinPath(path, "type"), "prob is a model output; it cannot be used in %s", sectionName(sec))
	}
	return false
}

func sectionName(sec section) string {
	return [...]string{"context", "input", "output", "metadata.create", "metadata.validate"}[sec]
}

func (b *builder) validatedLabelCondition(m map[string]any, path string) string {
	cond := b.text(m, "validated_label_condition", path)
	if cond != "" && !contains(validationLabels, cond) {
		b.rep.problem(joinPath(path, "validated_label_condition"), "%q is not one of correct, incorrect, flagged", cond)
		return ""
	}
	return cond
}

func (b *builder) fieldLabels(f *Field, m map[string]any, path string) {
	v, present := m["labels"]
	needed := f.Type == TypeMulticlass || f.Type == TypeMultilabel
	switch {
	case present && v != nil:
		f.Labels = b.labelList(v, joinPath(path, "labels"))
	case needed:
		b.rep.problem(joinPath(path, "labels"), "required for %s", f.Type)
	}
}

// labelList reads a non-empty list of unique labels (field labels, or v2
// goal options). Numbers and bools are taken as their text, as a YAML author
// writing `labels: [0, 1]` means the labels "0" and "1".
func (b *builder) labelList(v any, path string) []string {
	items, ok := asList(v)
	if !ok {
		b.rep.problem(path, "must be a list of labels")
		return nil
	}
	if len(items) == 0 {
		b.rep.problem(path, "must not be empty")
		return nil
	}
	if b.tooMany(path, len(items), maxLabels) {
		return nil
	}
	labels := make([]string, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, item := range items {
		// Labels are trimmed as answers are, or " a" could never be chosen.
		s, ok := scalarText(item)
		s = strings.TrimSpace(s)
		switch {
		case !ok:
			b.rep.problem(indexPath(path, i), "must be a string")
		case s == "":
			b.rep.problem(indexPath(path, i), "must not be empty")
		case seen[s]:
			b.rep.problem(indexPath(path, i), "duplicate label %q", s)
		default:
			seen[s] = true
			labels = append(labels, s)
		}
	}
	return labels
}

// context reads `context`: a v1 list of fields or a v2 object.
func (b *builder) context() {
	switch v := b.doc["context"].(type) {
	case nil:
	case []any:
		fields, _ := b.fieldList(v, "context", inContext)
		for i, f := range fields {
			b.cfg.Context = append(b.cfg.Context, b.place(f, indexPath("context", i), inContext))
		}
	case map[string]any:
		b.v2Context(v)
	default:
		b.rep.problem("context", "must be a list of fields (v1) or a mapping with type and field_names_for_the_model (v2)")
	}
}

// input reads the v1 `input` list, then fills the gaps with the fields
// synthesised from v2 keys (user_input, goal, selectable-text context): v1
// wins when both name the same field.
func (b *builder) input() {
	fields, _ := b.fieldList(b.doc["input"], "input", inInput)
	for i, f := range fields {
		if _, dup := b.cfg.ContextField(f.Name); dup {
			b.rep.problem(joinPath(indexPath("input", i), "name"), "duplicate field name %q (already a context field)", f.Name)
			continue
		}
		b.cfg.Input = append(b.cfg.Input, b.place(f, indexPath("input", i), inInput))
	}
	v2 := append(append(append([]placedField(nil), b.v2User...), b.v2Select...), b.v2Goal...)
	for _, p := range v2 {
		_, isInput := b.cfg.InputField(p.Name)
		_, isContext := b.cfg.ContextField(p.Name)
		if !isInput && !isContext {
			b.cfg.Input = append(b.cfg.Input, b.place(p.Field, p.path, inInput))
		}
	}
	if len(b.cfg.Input) == 0 {
		b.rep.problem("input", "required: no annotator input fields (give input, or v2 user_input/goal)")
	}
}

// output reads `output`, resolving abbreviated objects. Like Dynabench, an
// output field named like an input or context field takes that field's
// definition, so a target is compared as what the annotator entered.
func (b *builder) output() {
	v, present := b.doc["output"]
	if !present || v == nil {
		b.synthesiseOutput()
		return
	}
	fields, abbreviated := b.fieldList(v, "output", inOutput)
	for i, f := range fields {
		path := indexPath("output", i)
		full, found := b.cfg.InputField(f.Name)
		if !found {
			full, found = b.cfg.ContextField(f.Name)
		}
		switch {
		case found && !abbreviated[i] && full.Type != f.Type:
			b.rep.problem(joinPath(path, "type"), "%q, but the field %q is declared %s", f.Type, f.Name, full.Type)
		case found:
		case abbreviated[i]:
			b.rep.problem(joinPath(path, "name"), "no input or context field named %q (give a type to declare a new output field)", f.Name)
			continue
		default:
			full = b.place(f, path, inOutput)
		}
		b.cfg.Output = append(b.cfg.Output, full)
	}
	if len(b.cfg.Output) == 0 {
		b.rep.problem("output", "must not be empty")
	}
}

// synthesiseOutput fills in the output of a v2 config that has none: the
// model answers the input field named by model_output.model_prediction_label.
func (b *builder) synthesiseOutput() {
	mo, _ := asMap(b.doc["model_output"])
	name, _ := scalarText(mo["model_prediction_label"])
	if f, ok := b.cfg.InputField(name); ok {
		b.cfg.Output = []Field{f}
		return
	}
	b.rep.problem("output", "required (or a v2 model_output.model_prediction_label naming an input field)")
}

// metadata reads metadata.create and metadata.validate.
func (b *builder) metadata() {
	m := b.mapping(b.doc, "metadata", "")
	if m == nil {
		return
	}
	b.unknownKeys(m, "metadata", map[string]bool{"create": true, "validate": true})
	create, _ := b.fieldList(m["create"], "metadata.create", inCreate)
	for i, f := range create {
		b.cfg.CreateMetadata = append(b.cfg.CreateMetadata, b.place(f, indexPath("metadata.create", i), inCreate))
	}
	validate, _ := b.fieldList(m["validate"], "metadata.validate", inValidate)
	for i, f := range validate {
		b.cfg.ValidateMetadata = append(b.cfg.ValidateMetadata, b.place(f, indexPath("metadata.validate", i), inValidate))
	}
}

// checkReferences checks what a field refers to, once every field is known.
func (b *builder) checkReferences() {
	for _, p := range b.placed {
		switch p.Type {
		case TypeProb:
			b.checkProbReference(p)
		case TypeContextStringSelection:
			b.checkSelectionReference(p)
		}
	}
}

func (b *builder) checkProbReference(p placedField) {
	path := joinPath(p.path, "reference_name")
	if p.SingleProb {
		return
	}
	if p.ReferenceName == "" {
		b.rep.problem(path, "required for prob (or set single_prob: true)")
		return
	}
	ref, ok := b.cfg.InputField(p.ReferenceName)
	if !ok {
		ref, ok = b.cfg.ContextField(p.ReferenceName)
	}
	if !ok {
		ref, ok = b.cfg.OutputField(p.ReferenceName)
	}
	switch {
	case !ok:
		b.rep.problem(path, "no field named %q", p.ReferenceName)
	case ref.Type != TypeMulticlass:
		b.rep.problem(path, "%q is %s; a prob must refer to a multiclass field", p.ReferenceName, typeName(ref.Type))
	}
}

func (b *builder) checkSelectionReference(p placedField) {
	path := joinPath(p.path, "reference_name")
	if p.ReferenceName == "" {
		b.rep.problem(path, "required for context_string_selection")
		return
	}
	ref, ok := b.cfg.ContextField(p.ReferenceName)
	switch {
	case !ok:
		b.rep.problem(path, "no context field named %q", p.ReferenceName)
	case ref.Type != TypeString:
		b.rep.problem(path, "context field %q is %s; a selection needs a string to select from", p.ReferenceName, typeName(ref.Type))
	}
}

func typeName(t string) string {
	if t == "" {
		return "untyped"
	}
	return fmt.Sprintf("of type %s", t)
}
