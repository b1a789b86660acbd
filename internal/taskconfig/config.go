package taskconfig

// Field types, as Dynabench names its annotation object types.
const (
	TypeString                 = "string"
	TypeMulticlass             = "multiclass"
	TypeMultilabel             = "multilabel"
	TypeProb                   = "prob"
	TypeContextStringSelection = "context_string_selection"
	TypeImage                  = "image"
	TypeAudio                  = "audio"
)

// Model-wrong metric types.
const (
	ModelWrongExactMatch = "exact_match"
	ModelWrongStringF1   = "string_f1"
	ModelWrongAskUser    = "ask_user"
)

// Validation labels a validator can give, which metadata.validate fields
// name in validated_label_condition.
const (
	LabelCorrect   = "correct"
	LabelIncorrect = "incorrect"
	LabelFlagged   = "flagged"
)

// DefaultContextType is the v2 context.type assumed when a config has none
// (every v1 config).
const DefaultContextType = "plain-text"

// Config is a task config normalised from either dialect.
//
// The model-wrong metric is in ModelWrongMetric rather than a field called
// ModelWrong, because Go does not allow a field and a method of one name and
// the method ModelWrong is what applies it.
type Config struct {
	Source           string            // the original text, unchanged (what is stored)
	Raw              map[string]any    // the whole document, unknown keys kept
	GoalMessage      string            // goal_message, or v2 goal.text
	ContentWarning   string            // content_warning, shown before validating
	ContextType      string            // v2 context.type ("plain-text", "selectable-text", ...); "plain-text" by default
	Context          []Field           // owner-supplied context fields
	Input            []Field           // annotator input fields, including the target label / answer
	Output           []Field           // model output fields (abbreviated `- name: label` resolved to the full object)
	CreateMetadata   []Field           // metadata.create
	ValidateMetadata []Field           // metadata.validate
	ModelWrongMetric ModelWrongMetric  // model_wrong_metric (or v2 model_evaluation_metric); ask_user by default
	Perf             []PerfMetric      // perf_metric (a list is allowed; first is principal)
	DeltaMetrics     []string          // "fairness", "robustness"
	Aggregation      Aggregation       // aggregation_metric
	ModelInputMap    map[string]string // v2 model_input: model field name -> input/context field name
	PredictionField  string            // v2 model_output.model_prediction_label, else the first target
}

// Field is one annotation object: a context, input, output or metadata field.
type Field struct {
	Name, Type, Placeholder, DisplayName string

	Labels                  []string // multiclass / multilabel
	ReferenceName           string   // context_string_selection -> context field; prob -> multiclass field
	SingleProb              bool     // prob with single_prob
	AsGoalMessage           bool     // the labels are shown as the annotator's goal
	ModelWrongCondition     *bool    // metadata.create only: asked only when model_wrong equals it
	ValidatedLabelCondition string   // metadata.validate only: correct|incorrect|flagged|""
}

// ModelWrongMetric says how a model's answer is compared with the
// annotator's target: exact_match, string_f1 or ask_user (the default).
type ModelWrongMetric struct {
	Type           string
	ReferenceNames []string
	Threshold      float64
}

// PerfMetric is one performance metric used to score models on datasets.
type PerfMetric struct{ Type, ReferenceName string }

// Aggregation is how a leaderboard combines metrics (always "dynascore"),
// with the owner's default metric weights.
type Aggregation struct {
	Type           string
	DefaultWeights map[string]float64
}

// Targets returns the names of the fields in both Input and Output, in Input
// order. They are what the annotator wants the model to get right: they are
// stripped from the model's input and compared with its output.
func (c *Config) Targets() []string {
	if c == nil {
		return nil
	}
	var names []string
	for _, f := range c.Input {
		if _, ok := findField(c.Output, f.Name); ok {
			names = append(names, f.Name)
		}
	}
	return names
}

// Labels returns the labels of the first multiclass target, or nil when
// there is none (QA, for instance).
func (c *Config) Labels() []string {
	for _, name := range c.Targets() {
		if f, _ := c.InputField(name); f.Type == TypeMulticlass {
			return f.Labels
		}
	}
	return nil
}

// InputField returns the Input field with that name.
func (c *Config) InputField(name string) (Field, bool) {
	if c == nil {
		return Field{}, false
	}
	return findField(c.Input, name)
}

// ContextField returns the Context field with that name.
func (c *Config) ContextField(name string) (Field, bool) {
	if c == nil {
		return Field{}, false
	}
	return findField(c.Context, name)
}

// OutputField returns the Output field with that name.
func (c *Config) OutputField(name string) (Field, bool) {
	if c == nil {
		return Field{}, false
	}
	return findField(c.Output, name)
}

// AsksUser reports whether the annotator, not a metric, says whether the
// model was fooled (model_wrong_metric ask_user, the default).
func (c *Config) AsksUser() bool {
	return c != nil && c.ModelWrongMetric.Type == ModelWrongAskUser
}

// IsTarget reports whether name is a target (see Targets).
func (c *Config) IsTarget(name string) bool {
	_, in := c.InputField(name)
	_, out := c.OutputField(name)
	return in && out
}

func findField(fields []Field, name string) (Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

func (c *Config) targetSet() map[string]bool {
	set := map[string]bool{}
	for _, name := range c.Targets() {
		set[name] = true
	}
	return set
}

// PrimaryTarget is the field models are trained on and scored by: the perf metric's reference
// field when it names a target, else the model's prediction field when it is a target, else the
// first target. False when the config has no target.
func (c *Config) PrimaryTarget() (Field, bool) {
	targets := c.Targets()
	if len(targets) == 0 {
		return Field{}, false
	}
	name := targets[0]
	switch {
	case len(c.Perf) > 0 && c.IsTarget(c.Perf[0].ReferenceName):
		name = c.Perf[0].ReferenceName
	case c.IsTarget(c.PredictionField):
		name = c.PredictionField
	}
	return c.InputField(name)
}
