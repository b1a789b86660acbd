package dynabench

import "time"

// Example statuses.
const (
	StatusPending   = "pending_validation"
	StatusVerified  = "verified"
	StatusRejected  = "rejected"
	StatusRetracted = "retracted"
)

// Validation labels and modes.
const (
	LabelCorrect   = "correct"
	LabelIncorrect = "incorrect"
	LabelFlagged   = "flagged"
	ModeUser       = "user"
	ModeOwner      = "owner"
)

// Example is what an annotator wrote against a context, with the model's answer.
type Example struct {
	ID          int64
	TaskID      int64
	RoundID     int64
	RoundNumber int
	ContextID   int64
	UserID      int64
	Input       map[string]any
	ModelID     *int64
	ModelName   string
	ModelOutput map[string]any
	ModelWrong  *bool  // nil while an ask_user answer is pending, or when the model failed
	ModelError  string // set when the model failed; the example is kept
	Status      string
	Flagged     bool
	FlagReason  string
	Metadata    map[string]any
	Tag         string
	Counts      ValidationCounts
	CreatedAt   time.Time
}

// ValidationCounts are an example's validations by label (user mode only).
type ValidationCounts struct {
	Correct   int `json:"correct"`
	Incorrect int `json:"incorrect"`
	Flagged   int `json:"flagged"`
}

// Fooled reports whether the example counts as fooling the model.
func (e *Example) Fooled() bool { return e.ModelWrong != nil && *e.ModelWrong }

// Validation is one validator's verdict on an example.
type Validation struct {
	ID        int64
	ExampleID int64
	UserID    int64
	Label     string
	Mode      string
	Metadata  map[string]any
	CreatedAt time.Time
}

// ValidationQuery asks for the next example a user should validate.
type ValidationQuery struct {
	TaskID     int64
	RoundID    int64
	UserID     int64
	NonFooling bool // also serve examples that did not fool the model
}

// AnnotatorStats is one row of the annotator leaderboard, and a user's stats in a task or round.
type AnnotatorStats struct {
	UserID         int64
	Username       string
	Submitted      int64 // non-retracted examples
	Fooled         int64
	VerifiedFooled int64
	RejectedFooled int64 // fooling examples that validators rejected
	Retracted      int64
	Validations    int64 // validations this user gave
}
