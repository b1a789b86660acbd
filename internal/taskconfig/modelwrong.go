package taskconfig

import "strings"

// ModelWrong decides whether the model was fooled, comparing the model's
// output with the annotator's input on the metric's reference fields:
//
//   - exact_match: wrong when output[name] differs from input[name] for any
//     reference name (strings compared after trimming; multilabel values
//     compared as sets);
//   - string_f1: wrong when SquadF1(output[name], input[name]) is below the
//     threshold (an input given as a list of acceptable answers takes the
//     best of them);
//   - ask_user: nil, the annotator says.
//
// A missing output field counts as wrong for exact_match and as F1 = 0 for
// string_f1. A missing input field makes the answer unknown (nil): there is
// nothing to compare with, and CheckInput reports it.
func (c *Config) ModelWrong(input, output map[string]any) *bool {
	if c == nil || len(c.ModelWrongMetric.ReferenceNames) == 0 {
		return nil
	}
	var compare func(f Field, in, out any) bool
	switch c.ModelWrongMetric.Type {
	case ModelWrongExactMatch:
		compare = differs
	case ModelWrongStringF1:
		compare = func(_ Field, in, out any) bool { return bestF1(in, out) < c.ModelWrongMetric.Threshold }
	default:
		return nil
	}
	wrong := false
	for _, name := range c.ModelWrongMetric.ReferenceNames {
		in, ok := input[name]
		if !ok || in == nil {
			return nil
		}
		f, _ := c.InputField(name)
		if out, ok := output[name]; !ok || out == nil || compare(f, in, out) {
			wrong = true
		}
	}
	return &wrong
}

// differs is exact_match for one field.
func differs(f Field, in, out any) bool {
	if f.Type == TypeMultilabel {
		return !sameSet(in, out)
	}
	a, okA := scalarText(in)
	b, okB := scalarText(out)
	return !okA || !okB || strings.TrimSpace(a) != strings.TrimSpace(b)
}

// sameSet compares two lists of labels as sets.
func sameSet(a, b any) bool {
	sa, okA := labelSetOf(a)
	sb, okB := labelSetOf(b)
	if !okA || !okB || len(sa) != len(sb) {
		return false
	}
	for k := range sa {
		if !sb[k] {
			return false
		}
	}
	return true
}

func labelSetOf(v any) (map[string]bool, bool) {
	items, ok := asList(v)
	if !ok {
		return nil, false
	}
	set := map[string]bool{}
	for _, item := range items {
		s, ok := scalarText(item)
		if !ok {
			return nil, false
		}
		set[strings.TrimSpace(s)] = true
	}
	return set, true
}

// bestF1 scores a model's answer against the annotator's answer, or the best
// of a list of acceptable answers. A non-string answer scores 0.
func bestF1(in, out any) float64 {
	pred, ok := out.(string)
	if !ok {
		return 0
	}
	if truth, ok := in.(string); ok {
		return SquadF1(pred, truth)
	}
	best := 0.0
	items, _ := asList(in)
	for _, item := range items {
		if truth, ok := item.(string); ok {
			best = max(best, SquadF1(pred, truth))
		}
	}
	return best
}
