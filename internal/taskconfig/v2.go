package taskconfig

import (
	"sort"
	"strings"
)

// This file reads the keys of the v2 dialect (Dynabench's newer UI) and
// synthesises the v1 fields they imply, so both dialects end up in one
// schema. In v2:
//
//   - context is an object {type, field_names_for_the_model}. Each entry of
//     field_names_for_the_model maps a slot of the context component to the
//     name the model receives it under. The slot "context" is the context
//     text itself. In a selectable-text context every other slot is a span
//     the annotator selects from that text (QA: `answer: label`), so it
//     becomes an input field of type context_string_selection named after
//     the slot, which is the name output and model_wrong_metric use. When
//     a context slot's model name differs from the slot, ModelInputMap
//     gets the alias; a selection's model name is dropped, because
//     Dynabench's UI sent the annotator's answer to the model under it,
//     which hands the model the target.
//   - user_input lists the annotator's inputs, each sent to the model as
//     field_name_for_the_model.
//   - a goal with options (multioptions, radio buttons) is the target label
//     the annotator picks; a plain-text goal is just the goal message.

// optionTypes are the v2 component types that offer a fixed set of options.
var optionTypes = map[string]bool{
	"multioptions": true, "radio-button-options": true, "double-multioptions": true, "dropdown": true,
}

// selectableText is the context type whose extra slots are selections.
const selectableText = "selectable-text"

func (b *builder) v2Context(m map[string]any) {
	if t := strings.TrimSpace(b.text(m, "type", "context")); t != "" {
		b.cfg.ContextType = t
	}
	names := b.contextNames(m)
	if b.cfg.ContextType == selectableText {
		b.selectableContext(names)
		return
	}
	kind := contextFieldType(b.cfg.ContextType)
	for _, slot := range contextOrder(names) {
		b.addV2Context(slot, names[slot], kind)
	}
}

// contextNames reads field_names_for_the_model. A context object without it
// holds its text under "context", which is what Dynabench's components read.
func (b *builder) contextNames(m map[string]any) map[string]string {
	path := "context.field_names_for_the_model"
	raw, present := m["field_names_for_the_model"]
	if !present || raw == nil {
		return map[string]string{"context": "context"}
	}
	fnm, ok := asMap(raw)
	if !ok {
		b.rep.problem(path, "must be a mapping")
		return nil
	}
	if b.tooMany(path, len(fnm), maxEntries) {
		return nil
	}
	names := map[string]string{}
	for _, slot := range sortedKeys(fnm) {
		name, ok := scalarText(fnm[slot])
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.TrimSpace(slot) == "" {
			b.rep.problem(joinPath(path, slot), "must name the field the model receives")
			continue
		}
		names[slot] = name
	}
	return names
}

// contextOrder puts the main "context" slot first, the rest alphabetically,
// so the synthesised fields do not depend on map order.
func contextOrder(names map[string]string) []string {
	slots := sortedKeys(names)
	sort.SliceStable(slots, func(i, j int) bool { return slots[i] == "context" && slots[j] != "context" })
	return slots
}

// contextFieldType guesses the field type from the v2 component type.
func contextFieldType(contextType string) string {
	t := strings.ToLower(contextType)
	switch {
	case strings.Contains(t, "image"):
		return TypeImage
	case strings.Contains(t, "audio"):
		return TypeAudio
	}
	return TypeString
}

func (b *builder) addV2Context(slot, modelName, kind string) {
	path := joinPath("context.field_names_for_the_model", slot)
	if _, dup := b.cfg.ContextField(slot); dup {
		return
	}
	b.cfg.Context = append(b.cfg.Context, b.place(Field{Name: slot, Type: kind}, path, inContext))
	if modelName != slot {
		b.contextAlias[modelName] = slot
	}
}

func (b *builder) selectableContext(names map[string]string) {
	if names == nil {
		return
	}
	if _, ok := names["context"]; !ok {
		b.rep.problem("context.field_names_for_the_model", `selectable-text needs a "context" entry naming the text to select from`)
		return
	}
	b.addV2Context("context", names["context"], TypeString)
	for _, slot := range contextOrder(names)[1:] {
		f := Field{Name: slot, Type: TypeContextStringSelection, ReferenceName: "context"}
		b.v2Select = append(b.v2Select, placedField{f, joinPath("context.field_names_for_the_model", slot), inInput})
	}
}

// goal reads the v2 goal: its text is the goal message unless goal_message
// is set, and its options are the target label.
func (b *builder) goal() {
	g := b.mapping(b.doc, "goal", "")
	if g == nil {
		return
	}
	if text := strings.TrimSpace(b.text(g, "text", "goal")); b.cfg.GoalMessage == "" {
		b.cfg.GoalMessage = text
	}
	typ := b.text(g, "type", "goal")
	options, present := g["options"]
	if !present || options == nil {
		if optionTypes[typ] {
			b.rep.problem("goal.options", "required for %s", typ)
		}
		return
	}
	name := strings.TrimSpace(b.text(g, "field_name_for_the_model", "goal"))
	if name == "" {
		b.rep.problem("goal.field_name_for_the_model", "required with options: it names the label field")
		return
	}
	f := Field{Name: name, Type: TypeMulticlass, Labels: b.labelList(options, "goal.options"), AsGoalMessage: true}
	b.v2Goal = append(b.v2Goal, placedField{f, "goal.field_name_for_the_model", inInput})
}

// userInput reads the v2 user_input list.
func (b *builder) userInput() {
	seen := map[string]bool{}
	for i, item := range b.list(b.doc, "user_input", "") {
		path := indexPath("user_input", i)
		f, ok := b.userInputField(item, path)
		if !ok {
			continue
		}
		namePath := joinPath(path, "field_name_for_the_model")
		if seen[f.Name] {
			b.rep.problem(namePath, "duplicate field name %q", f.Name)
			continue
		}
		seen[f.Name] = true
		b.v2User = append(b.v2User, placedField{f, namePath, inInput})
	}
}

func (b *builder) userInputField(item any, path string) (Field, bool) {
	m, ok := asMap(item)
	if !ok {
		b.rep.problem(path, "must be a mapping")
		return Field{}, false
	}
	f := Field{Type: TypeString, Placeholder: b.text(m, "placeholder", path)}
	f.Name = strings.TrimSpace(b.text(m, "field_name_for_the_model", path))
	if f.Name == "" {
		b.rep.problem(joinPath(path, "field_name_for_the_model"), "required")
		return f, false
	}
	if options, present := m["options"]; present && options != nil && optionTypes[b.text(m, "type", path)] {
		f.Type = TypeMulticlass
		f.Labels = b.labelList(options, joinPath(path, "options"))
	}
	return f, true
}

// modelInput reads the v2 model_input map (model field -> source field) and
// adds the context aliases implied by field_names_for_the_model.
func (b *builder) modelInput() {
	m := b.mapping(b.doc, "model_input", "")
	mi := map[string]string{}
	for _, model := range sortedKeys(m) {
		path := joinPath("model_input", model)
		src, ok := scalarText(m[model])
		src = strings.TrimSpace(src)
		_, isInput := b.cfg.InputField(src)
		_, isContext := b.cfg.ContextField(src)
		switch {
		case !ok || src == "":
			b.rep.problem(path, "must name an input or context field")
			continue
		case !isInput && !isContext:
			b.rep.problem(path, "no input or context field named %q", src)
			continue
		case b.cfg.IsTarget(src):
			b.rep.warn(path, "%q is a target; it is never sent to the model", src)
		}
		mi[model] = src
	}
	for model, src := range b.contextAlias {
		if _, set := mi[model]; !set {
			mi[model] = src
		}
	}
	if len(mi) > 0 {
		b.cfg.ModelInputMap = mi
	}
}

// predictionField reads v2 model_output.model_prediction_label, which must
// name an output field; without it the first target is the prediction.
func (b *builder) predictionField() {
	if mo := b.mapping(b.doc, "model_output", ""); mo != nil {
		name := strings.TrimSpace(b.text(mo, "model_prediction_label", "model_output"))
		if _, ok := b.cfg.OutputField(name); ok {
			b.cfg.PredictionField = name
			return
		}
		if name != "" {
			b.rep.problem("model_output.model_prediction_label", "no output field named %q", name)
		}
	}
	if targets := b.cfg.Targets(); len(targets) > 0 {
		b.cfg.PredictionField = targets[0]
	}
}
