package training

import "time"

// Manifest says what an artifact is, what it learnt from and how well it did. Everything in it but
// TrainedAt is a function of the training data, the config and the options, so two trainings of the
// same rows with the same seed have manifests that differ in TrainedAt alone.
type Manifest struct {
	FormatVersion int    `json:"format_version"` // of the artifact envelope; see FormatVersion
	Kind          string `json:"kind"`           // KindClassifier or KindSpan
	Model         string `json:"model"`          // the built-in model's name and version, e.g. "builtin-logreg-v1"
	Task          string `json:"task"`
	// ConfigSHA256 is the hex SHA-256 of the task config's text the model was trained under.
	ConfigSHA256 string   `json:"config_sha256"`
	Labels       []string `json:"labels,omitempty"` // the classifier's labels, in output order
	// Sources are the data, in training order, each with its row count and content hash.
	Sources         []SourceInfo    `json:"sources"`
	Seed            uint64          `json:"seed"`
	Hyperparameters Hyperparameters `json:"hyperparameters"`
	HeldOutRatio    float64         `json:"heldout_ratio"`
	TrainRows       int             `json:"train_rows"`
	HeldOutRows     int             `json:"heldout_rows"`
	// HeldOutScores are the model's scores on the held-out rows (ScoreAccuracy and ScoreMacroF1 for a
	// classifier, ScoreExactMatch and ScoreF1 for QA); absent when nothing was held out.
	HeldOutScores map[string]float64 `json:"heldout_scores,omitempty"`
	// HeldOutFailures counts held-out rows the model could not read (scored as wrong).
	HeldOutFailures int `json:"heldout_failures,omitempty"`
	// ModelSHA256 is the hex SHA-256 of the built-in model's bytes: the model's identity, the same for
	// two trainings of the same data and seed. Load checks it.
	ModelSHA256 string    `json:"model_sha256"`
	CodeVersion string    `json:"code_version"`
	TrainedAt   time.Time `json:"trained_at"`
}

// SourceInfo describes one source of a training.
type SourceInfo struct {
	Name string `json:"name"`
	Rows int    `json:"rows"` // rows used, train and held-out
	// HeldOut is how many of Rows were held out.
	HeldOut int `json:"heldout"`
	Skipped int `json:"skipped,omitempty"`
	// SHA256 is the hex SHA-256 of the rows as canonical JSON lines ({"input","key","label"}, keys
	// sorted), so it names the data, whatever file or database it came from.
	SHA256 string `json:"sha256"`
}

// Hyperparameters are how the model was trained and what it reads and answers.
type Hyperparameters struct {
	Features        string   `json:"features,omitempty"` // classifier: FeaturesText or FeaturesPair
	TextFields      []string `json:"text_fields,omitempty"`
	PremiseField    string   `json:"premise_field,omitempty"`
	HypothesisField string   `json:"hypothesis_field,omitempty"`
	ContextField    string   `json:"context_field,omitempty"`  // span model
	QuestionField   string   `json:"question_field,omitempty"` // span model
	OutputField     string   `json:"output_field"`             // the predicted label or answer
	ScoreField      string   `json:"score_field"`              // its probability or confidence
	Buckets         int      `json:"buckets"`
	Epochs          int      `json:"epochs"`
	L2              float64  `json:"l2"`
	MaxSpanTokens   int      `json:"max_span_tokens,omitempty"`
}
