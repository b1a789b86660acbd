package dynabench

import "time"

// Context selection strategies (API.md; Dynabench's "min" is our "least_used").
const (
	StrategyLeastUsed        = "least_used"
	StrategyUniform          = "uniform"
	StrategyLeastFooled      = "least_fooled"
	StrategyValidationFailed = "validation_failed"
)

// Task is a benchmark task: its config (Dynabench's YAML format, stored as given) and settings.
type Task struct {
	ID           int64
	Code         string
	Name         string
	Description  string
	ConfigSource string // the task config, YAML or JSON text as the owner gave it
	ConfigRev    int64  // bumped on every config change; keys parsed-config caches
	CurrentRound int
	Settings     TaskSettings
	CreatedAt    time.Time
}

// TaskSettings are the per-task policies outside the Dynabench config file.
type TaskSettings struct {
	NumMatchingValidations int    `json:"num_matching_validations"` // N for verified / rejected; default 3
	ValidateNonFooling     bool   `json:"validate_non_fooling"`     // also queue examples that did not fool the model
	ContextStrategy        string `json:"context_strategy"`         // default strategy for GET .../context
	MaxExamplesPerDay      int    `json:"max_examples_per_day"`     // per user and task; 0 means no cap
	Hidden                 bool   `json:"hidden"`
	ModelTimeoutMS         int    `json:"model_timeout_ms"` // deadline for the model in the loop; default 5000
	// MaxSubmissionsPerDay bounds the models a user (not an owner) submits to the task per UTC day;
	// submissions the platform failed are not counted. 0 means no quota.
	MaxSubmissionsPerDay int `json:"max_submissions_per_day,omitempty"`
}

// Normalize fills defaults.
func (s *TaskSettings) Normalize() {
	if s.NumMatchingValidations <= 0 {
		s.NumMatchingValidations = 3
	}
	if s.ContextStrategy == "" {
		s.ContextStrategy = StrategyLeastUsed
	}
	if s.ModelTimeoutMS <= 0 {
		s.ModelTimeoutMS = 5000
	}
}

// Round statuses.
const (
	RoundOpen   = "open"
	RoundClosed = "closed"
)

// Loop modes of a round with several models in the loop.
const (
	LoopRandom = "random" // one model picked at random per example, as Dynabench does
	LoopMean   = "mean"   // all models; the label with the highest mean probability
	LoopVote   = "vote"   // all models; the majority label
)

// Round is one numbered round of a task with its models in the loop and counters.
type Round struct {
	ID        int64
	TaskID    int64
	Number    int
	Status    string
	Secret    string // random; keys anonymised ids in exports
	ModelIDs  []int64
	LoopMode  string // LoopRandom (default), LoopMean or LoopVote: how several models answer
	Stats     RoundStats
	CreatedAt time.Time
	ClosedAt  *time.Time
}

// RoundStats are a round's counters; retracted examples never count.
type RoundStats struct {
	Collected      int64   `json:"collected"`
	Fooled         int64   `json:"fooled"`
	VerifiedFooled int64   `json:"verified_fooled"`
	Rejected       int64   `json:"rejected"`
	MER            float64 `json:"mer"`
	VMER           float64 `json:"vmer"`
}

// Rates fills MER and vMER from the counts (0 when nothing is collected).
func (s *RoundStats) Rates() {
	s.MER, s.VMER = 0, 0
	if s.Collected > 0 {
		s.MER = float64(s.Fooled) / float64(s.Collected)
		s.VMER = float64(s.VerifiedFooled) / float64(s.Collected)
	}
}

// Context is one owner-supplied context of a round.
type Context struct {
	ID          int64
	TaskID      int64
	RoundID     int64
	Data        map[string]any // the config's context fields
	Tag         string
	Metadata    map[string]any
	TotalUsed   int64 // non-retracted examples written on it
	TotalFooled int64
	CreatedAt   time.Time
}

// ContextQuery asks for a context to write an example on.
type ContextQuery struct {
	TaskID   int64
	RoundID  int64
	Strategy string
	Tag      string
}
