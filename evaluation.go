package dynabench

import "time"

// Dataset access types: who sees a dataset's scores.
const (
	AccessScoring  = "scoring"  // on the leaderboard
	AccessStandard = "standard" // on the model page only
	AccessHidden   = "hidden"   // computed, shown to the task's owners only
)

// Dataset variants: the dataset itself and its perturbed copies.
const (
	VariantOriginal   = ""
	VariantRobustness = "robustness"
	VariantFairness   = "fairness"
)

// Dataset is an evaluation dataset of a task. Uploading under the same name replaces its examples
// and bumps Version; every model scored on the old version is re-scored.
type Dataset struct {
	ID          int64
	TaskID      int64
	Name        string
	Access      string
	Version     int
	RoundNumber int    // the round a released dataset came from; 0 for uploads
	SHA256      string // of the uploaded file
	Size        int    // original examples
	// Variants counts the examples of each perturbed copy ("robustness": n, "fairness": m).
	Variants  map[string]int
	CreatedBy int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DatasetExample is one example of a dataset or of one of its perturbed copies.
type DatasetExample struct {
	DatasetID    int64
	Variant      string
	Idx          int // position in the variant, from 0
	UID          string
	OriginalUID  string // for a perturbed copy: the example it was derived from
	Perturbation string // for a perturbed copy: the perturbation's name
	Input        map[string]any
	Gold         []string // acceptable targets: one label, or every acceptable answer
	Tags         []string
}

// Evaluation statuses.
const (
	EvalQueued    = "queued"
	EvalRunning   = "running"
	EvalCompleted = "completed"
	EvalFailed    = "failed"
)

// Who is to blame for a failed evaluation. Quotas charge model faults, never platform faults.
const (
	FaultModel    = "model"
	FaultPlatform = "platform"
)

// Evaluation is one model scored on one variant of one dataset.
type Evaluation struct {
	ID             int64
	ModelID        int64
	DatasetID      int64
	Variant        string
	DatasetVersion int
	Status         string
	Fault          string
	Reason         string
	Result         *EvalResult // nil until completed
	Log            string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// EvalResult is what an evaluation measured.
type EvalResult struct {
	N       int                           `json:"n"`
	Metrics map[string]float64            `json:"metrics"`          // perf metrics, 0–1 (accuracy, macro_f1, squad_em, squad_f1), or the delta score of a perturbed copy
	ByTag   map[string]map[string]float64 `json:"by_tag,omitempty"` // tag → metric → value
	// ExamplesPerSecond is throughput as measured by the worker that called the model.
	ExamplesPerSecond float64 `json:"examples_per_second,omitempty"`
	// MemoryGiB is the model's memory, when it can be measured honestly; nil means not measured.
	MemoryGiB *float64 `json:"memory_gib,omitempty"`
	// Predictions are the model's answers in example order (for bootstrap intervals and paired
	// comparisons). For a perturbed copy: the answers on the copies, then OriginalPredictions on
	// their originals, in the same order.
	Predictions         []string `json:"predictions"`
	OriginalPredictions []string `json:"original_predictions,omitempty"`
	Worker              string   `json:"worker,omitempty"`
	DurationMS          int64    `json:"duration_ms,omitempty"`
}

// Job states.
const (
	JobQueued  = "queued"
	JobRunning = "running"
	JobDone    = "done"
	JobParked  = "parked" // failed too often, or failed in a way retrying cannot fix; LastError says why
)

// Job is a unit of durable background work (an evaluation, a training, a release).
type Job struct {
	ID             int64
	Kind           string
	IdempotencyKey string
	Payload        map[string]any
	State          string
	Attempts       int
	MaxAttempts    int
	RunAfter       time.Time
	LeaseOwner     string
	LeaseUntil     time.Time
	LastError      string
	Result         []byte // JSON the job's runner writes as it goes (a cycle's progress)
	UserID         int64  // whose work it is (a model's owner); remote workers lease only their own
	TaskID         int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// JobQuery selects jobs to lease.
type JobQuery struct {
	Worker string
	Kinds  []string
	UserID int64 // 0: anyone's
	Lease  time.Duration
}

// LeaderboardFork is a saved set of leaderboard weights with its own URL.
type LeaderboardFork struct {
	ID             int64
	TaskID         int64
	Slug           string
	Name           string
	UserID         int64
	MetricWeights  map[string]float64
	DatasetWeights map[string]float64
	CreatedAt      time.Time
}

// LeaderboardSnapshot is a leaderboard frozen at one moment.
type LeaderboardSnapshot struct {
	ID        int64
	TaskID    int64
	Slug      string
	Name      string
	UserID    int64
	Body      []byte // the leaderboard response as JSON
	CreatedAt time.Time
}

// Release is a round's verified examples frozen as an immutable, versioned set of files.
type Release struct {
	ID          int64
	TaskID      int64
	RoundNumber int
	Version     int
	DatasetID   int64  // the test split's scoring dataset; 0 when the test split is empty
	Dir         string // where the files are
	Manifest    []byte // manifest.json
	Datasheet   string
	Canary      string
	Public      bool // anyone may download its files
	CreatedBy   int64
	CreatedAt   time.Time
}
