package web

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// FormField is one control generated from a task config field.
type FormField struct {
	Name        string // the config's field name
	Input       string // the form control's name ("in.statement", "meta.flag_reason")
	ID          string // the element id
	Label       string
	Type        string // string, multiclass, multilabel, context_string_selection
	Placeholder string
	Labels      []string
	Value       string
	Values      map[string]bool // multilabel
	Err         string
	Hint        string
	Ref         string // context_string_selection: the context field it selects from
	Condition   string // metadata.validate: the label it applies to
	Multiline   bool
}

// Checked reports whether a label is the value (multiclass) or one of the values (multilabel).
func (f FormField) Checked(label string) bool { return f.Value == label || f.Values[label] }

// fieldLabel is the text a field is shown with.
func fieldLabel(f taskconfig.Field) string {
	if f.DisplayName != "" {
		return strings.ToUpper(f.DisplayName[:1]) + f.DisplayName[1:]
	}
	return strings.ToUpper(f.Name[:1]) + strings.ReplaceAll(f.Name[1:], "_", " ")
}

// formFields turns config fields into controls named prefix+name, filled from values and errors
// (keyed errPrefix+name, as the service names its paths).
func formFields(fields []taskconfig.Field, prefix, errPrefix string, values map[string]any, form *Form) []FormField {
	out := make([]FormField, 0, len(fields))
	for _, f := range fields {
		ff := FormField{Name: f.Name, Input: prefix + f.Name, ID: strings.ReplaceAll(prefix, ".", "-") + f.Name,
			Label: fieldLabel(f), Type: f.Type, Placeholder: f.Placeholder, Labels: f.Labels, Ref: f.ReferenceName,
			Condition: f.ValidatedLabelCondition, Multiline: f.Type == taskconfig.TypeString}
		switch v := values[f.Name].(type) {
		case []any:
			ff.Values = map[string]bool{}
			for _, e := range v {
				ff.Values[valueText(e)] = true
			}
		default:
			ff.Value = valueText(v)
		}
		if form != nil {
			ff.Err = form.Err(errPrefix + f.Name)
		}
		switch f.Type {
		case taskconfig.TypeContextStringSelection:
			ff.Hint = "Select the answer in the passage with the mouse, or type it exactly as it appears."
		case taskconfig.TypeImage, taskconfig.TypeAudio:
			ff.Hint = "Give a URL."
		}
		out = append(out, ff)
	}
	return out
}

// readFields reads the controls of fields from a posted form; empty values are left out, so the
// rules report them as required (inputs) or simply absent (optional metadata).
func readFields(r *http.Request, fields []taskconfig.Field, prefix string) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		key := prefix + f.Name
		if f.Type == taskconfig.TypeMultilabel {
			var vals []any
			for _, v := range r.PostForm[key] {
				vals = append(vals, v)
			}
			if len(vals) > 0 {
				out[f.Name] = vals
			}
			continue
		}
		if v := r.PostFormValue(key); strings.TrimSpace(v) != "" {
			out[f.Name] = v
		}
	}
	return out
}

// ContextField is one context field shown to an annotator or validator.
type ContextField struct {
	Name, Label, Text string
	// SelectFor is the id of the control that a mouse selection in this text fills (QA answers).
	SelectFor string
}

// contextFields lists the context's fields in config order; selectFor maps a context field name to
// the control id its selections fill.
func contextFields(cfg *taskconfig.Config, c *dynabench.Context, selectFor map[string]string) []ContextField {
	var out []ContextField
	seen := map[string]bool{}
	for _, f := range cfg.Context {
		seen[f.Name] = true
		out = append(out, ContextField{Name: f.Name, Label: fieldLabel(f), Text: valueText(c.Data[f.Name]), SelectFor: selectFor[f.Name]})
	}
	var rest []string
	for k := range c.Data {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, ContextField{Name: k, Label: k, Text: valueText(c.Data[k])})
	}
	return out
}

// ProbBar is one label's probability in the model's answer.
type ProbBar struct {
	Label     string
	P         float64
	Predicted bool
}

// ModelAnswer is what the model said, ready to show.
type ModelAnswer struct {
	Field string // the prediction field's label
	Value string
	Probs []ProbBar
}

// modelAnswer reads the prediction and its probabilities from a model's output.
func modelAnswer(cfg *taskconfig.Config, out map[string]any) ModelAnswer {
	pred := cfg.PredictionField
	if pred == "" {
		if t := cfg.Targets(); len(t) > 0 {
			pred = t[0]
		}
	}
	a := ModelAnswer{Field: pred, Value: valueText(out[pred])}
	if f, ok := cfg.InputField(pred); ok {
		a.Field = fieldLabel(f)
	}
	for _, f := range cfg.Output {
		if f.Type != taskconfig.TypeProb {
			continue
		}
		switch v := out[f.Name].(type) {
		case map[string]any:
			labels := cfg.Labels()
			if rf, ok := cfg.InputField(f.ReferenceName); ok && len(rf.Labels) > 0 {
				labels = rf.Labels
			}
			for _, l := range labels {
				p := num(v[l])
				a.Probs = append(a.Probs, ProbBar{Label: l, P: p, Predicted: l == a.Value})
			}
		case float64, json.Number:
			a.Probs = append(a.Probs, ProbBar{Label: "confidence", P: num(v), Predicted: true})
		}
	}
	return a
}

// num reads a probability decoded from JSON.
func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case json.Number:
		f, _ := x.Float64()
		return f
	case int:
		return float64(x)
	}
	return 0
}
