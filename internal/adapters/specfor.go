package adapters

import (
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// SpecFor derives what a task expects from its models:
//
//   - classification when the prediction field (model_output.model_prediction_label, else the first
//     target) is multiclass: its labels, and the prob output field that refers to it;
//   - extractive_qa when it is a context_string_selection: the answer field, the single_prob output
//     field as conf, the context it selects from and the first other string input as the question;
//   - otherwise no Kind, with LabelField naming the prediction field: only adapters that pass answers
//     through (dynalab) can serve such a task.
//
// TextFields are the string context fields, then the string inputs that are not targets, in config
// order: what a classifier reads. Names are the task's own; the model input also holds the v2
// model_input aliases, which adapters do not need.
func SpecFor(cfg *taskconfig.Config) Spec {
	var s Spec
	if cfg == nil {
		return s
	}
	for _, f := range cfg.Context {
		if f.Type == taskconfig.TypeString {
			s.TextFields = append(s.TextFields, f.Name)
		}
	}
	for _, f := range cfg.Input {
		if f.Type == taskconfig.TypeString && !cfg.IsTarget(f.Name) {
			s.TextFields = append(s.TextFields, f.Name)
		}
	}
	pred, ok := predictionField(cfg)
	switch {
	case ok && pred.Type == taskconfig.TypeMulticlass:
		s.Kind, s.Labels, s.LabelField = KindClassification, append([]string(nil), pred.Labels...), pred.Name
		s.ProbField = outputProb(cfg, func(f taskconfig.Field) bool { return !f.SingleProb && f.ReferenceName == pred.Name })
	case ok && pred.Type == taskconfig.TypeContextStringSelection:
		s.Kind, s.AnswerField, s.ContextField = KindExtractiveQA, pred.Name, pred.ReferenceName
		s.ConfField = outputProb(cfg, func(f taskconfig.Field) bool { return f.SingleProb })
		s.QuestionField = question(cfg, s.ContextField)
	default:
		s.LabelField = cfg.PredictionField
	}
	return s
}

// predictionField returns the prediction field's definition (an output field named like an input
// takes the input's definition, so its labels and reference are there).
func predictionField(cfg *taskconfig.Config) (taskconfig.Field, bool) {
	if cfg.PredictionField == "" {
		return taskconfig.Field{}, false
	}
	return cfg.OutputField(cfg.PredictionField)
}

func outputProb(cfg *taskconfig.Config, match func(taskconfig.Field) bool) string {
	for _, f := range cfg.Output {
		if f.Type == taskconfig.TypeProb && match(f) {
			return f.Name
		}
	}
	return ""
}

// question is the first string input that is not a target and not the context itself.
func question(cfg *taskconfig.Config, context string) string {
	for _, f := range cfg.Input {
		if f.Type == taskconfig.TypeString && !cfg.IsTarget(f.Name) && f.Name != context {
			return f.Name
		}
	}
	return ""
}
