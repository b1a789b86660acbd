package training

import (
	"fmt"
	"slices"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// Model kinds, as the manifest names them.
const (
	KindClassifier = "classifier" // builtin.Classifier, for multiclass targets
	KindSpan       = "span"       // builtin.SpanModel, for context_string_selection targets (QA)
)

// Feature modes of the classifier.
const (
	FeaturesAuto = "auto" // pair when the data allows it (see planFor), text otherwise
	FeaturesText = "text" // bags of n-grams of the annotator's text fields
	FeaturesPair = "pair" // premise/hypothesis pair features (NLI)
)

// plan is what a config and its data say about the model to train.
type plan struct {
	kind   string
	target taskconfig.Field
	labels []string // classifier only
	score  string   // the output field with the probability ("prob") or confidence ("conf")

	// classifier inputs
	features            string
	textFields          []string
	premise, hypothesis string
	// span model inputs
	contextField, questionField string
}

// planFor picks the model for the config:
//
//   - a multiclass target gets the classifier. Its text is the annotator's non-target string fields. When
//     the config has exactly one string context field and one such input field, and every training row
//     carries both, it reads them as a premise/hypothesis pair (NLI); a seed set written without the
//     context, like the sentiment demo's, keeps plain text features. features forces either mode.
//   - a context_string_selection target gets the span model, reading the selection's context field and
//     the one non-target string input as the question.
//
// Anything else is EINVALID: the built-in models cannot learn it.
func planFor(cfg *taskconfig.Config, rows []Example, features string) (plan, error) {
	target, ok := primaryTarget(cfg)
	if !ok {
		return plan{}, dynabench.Errorf(dynabench.EINVALID, "the task config has no target field (an input field the model answers)")
	}
	texts := nonTargetStrings(cfg)
	switch target.Type {
	case taskconfig.TypeMulticlass:
		return classifierPlan(cfg, target, texts, rows, features)
	case taskconfig.TypeContextStringSelection:
		if len(texts) != 1 {
			return plan{}, dynabench.Errorf(dynabench.EINVALID,
				"a built-in QA model needs exactly one question field besides the answer; the config has %q", texts)
		}
		return plan{kind: KindSpan, target: target, score: scoreField(cfg, target, true, "conf"),
			contextField: target.ReferenceName, questionField: texts[0]}, nil
	}
	return plan{}, dynabench.Errorf(dynabench.EINVALID,
		"built-in models learn multiclass and context_string_selection targets, not %s (field %q)", target.Type, target.Name)
}

func classifierPlan(cfg *taskconfig.Config, target taskconfig.Field, texts []string, rows []Example, features string) (plan, error) {
	p := plan{kind: KindClassifier, target: target, labels: slices.Clone(target.Labels), score: scoreField(cfg, target, false, "prob")}
	var contexts []string
	for _, f := range cfg.Context {
		if f.Type == taskconfig.TypeString {
			contexts = append(contexts, f.Name)
		}
	}
	pairable := len(contexts) == 1 && len(texts) == 1
	if features == "" || features == FeaturesAuto {
		features = FeaturesText
		if pairable && allStrings(rows, contexts[0], texts[0]) {
			features = FeaturesPair
		}
	}
	switch {
	case features == FeaturesPair && !pairable:
		return plan{}, dynabench.Errorf(dynabench.EINVALID,
			"pair features need one string context field and one text input; the config has %q and %q", contexts, texts)
	case features == FeaturesPair:
		p.premise, p.hypothesis = contexts[0], texts[0]
	case features != FeaturesText:
		return plan{}, dynabench.FieldErrorf(dynabench.EINVALID, "features", "%q is not auto, text or pair", features)
	case len(texts) > 0:
		p.textFields = texts
	case len(contexts) > 0:
		p.textFields = contexts // nothing typed by the annotator but the label: learn from the context
	default:
		return plan{}, dynabench.Errorf(dynabench.EINVALID, "the task config has no text field for a built-in classifier to read")
	}
	p.features = features
	return p, nil
}

// primaryTarget is the field the model learns to predict (taskconfig.Config.PrimaryTarget).
func primaryTarget(cfg *taskconfig.Config) (taskconfig.Field, bool) { return cfg.PrimaryTarget() }

// nonTargetStrings lists the annotator's string input fields that the model reads.
func nonTargetStrings(cfg *taskconfig.Config) []string {
	var names []string
	for _, f := range cfg.Input {
		if f.Type == taskconfig.TypeString && !cfg.IsTarget(f.Name) {
			names = append(names, f.Name)
		}
	}
	return names
}

// scoreField names the output field carrying the model's probability for the target: the config's
// prob field referring to it, or its single_prob field when single (QA's confidence), else def.
func scoreField(cfg *taskconfig.Config, target taskconfig.Field, single bool, def string) string {
	for _, f := range cfg.Output {
		if f.Type == taskconfig.TypeProb && f.SingleProb == single && (single || f.ReferenceName == target.Name) {
			return f.Name
		}
	}
	return def
}

// allStrings reports whether every row has string values for both fields.
func allStrings(rows []Example, a, b string) bool {
	for _, r := range rows {
		_, okA := r.Input[a].(string)
		_, okB := r.Input[b].(string)
		if !okA || !okB {
			return false
		}
	}
	return len(rows) > 0
}

func (p plan) String() string {
	if p.kind == KindSpan {
		return fmt.Sprintf("span model reading %q and %q", p.contextField, p.questionField)
	}
	if p.features == FeaturesPair {
		return fmt.Sprintf("pair classifier reading %q (premise) and %q (hypothesis)", p.premise, p.hypothesis)
	}
	return fmt.Sprintf("classifier reading %q", p.textFields)
}
