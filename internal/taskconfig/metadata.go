package taskconfig

import "fmt"

// CheckCreateMetadata checks what an annotator adds after the model
// answered: only metadata.create names; a field whose model_wrong_condition
// does not match modelWrong (when modelWrong is known) is a problem, because
// the form never asked it; values of the right type, strings at most
// lim.MaxFieldBytes. Every field is optional. Paths look like
// "metadata.example_explanation".
func (c *Config) CheckCreateMetadata(meta map[string]any, modelWrong *bool, lim Limits) []Problem {
	if c == nil {
		return nil
	}
	k := c.checker(nil, lim)
	fields := fieldIndex(c.CreateMetadata)
	for _, name := range sortedKeys(meta) {
		path := joinPath("metadata", name)
		f, ok := fields[name]
		switch {
		case !ok:
			k.ps.add(path, "unknown field")
		case meta[name] == nil:
		case f.ModelWrongCondition != nil && modelWrong != nil && *f.ModelWrongCondition != *modelWrong:
			k.ps.add(path, "not asked when the model was %s", fooled(*modelWrong))
		default:
			k.value(path, f, meta[name], metadataMode)
		}
	}
	return k.ps
}

func fooled(wrong bool) string {
	if wrong {
		return "fooled"
	}
	return "not fooled"
}

// CheckValidateMetadata checks what a validator adds with the label
// (correct, incorrect or flagged): only metadata.validate names; a field
// with a validated_label_condition only with that label; multiclass values
// in their labels; a context_string_selection a substring of its context
// field; strings at most lim.MaxFieldBytes. Every field is optional. Paths
// look like "metadata.corrected_label".
func (c *Config) CheckValidateMetadata(ctx map[string]any, label string, meta map[string]any, lim Limits) []Problem {
	if c == nil {
		return nil
	}
	k := c.checker(ctx, lim)
	if !contains(validationLabels, label) {
		k.ps.add("label", "%s is not one of correct, incorrect, flagged", quoteShort(label))
	}
	fields := fieldIndex(c.ValidateMetadata)
	for _, name := range sortedKeys(meta) {
		path := joinPath("metadata", name)
		f, ok := fields[name]
		switch {
		case !ok:
			k.ps.add(path, "unknown field")
		case meta[name] == nil:
		case f.ValidatedLabelCondition != "" && f.ValidatedLabelCondition != label:
			k.ps.add(path, "only asked when the example is validated %s", fmt.Sprintf("%q", f.ValidatedLabelCondition))
		default:
			k.value(path, f, meta[name], metadataMode)
		}
	}
	return k.ps
}
