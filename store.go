package dynabench

import (
	"context"
	"time"
)

// Store is the persistence the rules use. One implementation (internal/sqlstore) serves SQLite and
// PostgreSQL; one conformance suite tests every method on both.
//
// Errors: ENOTFOUND when a looked-up row does not exist, ECONFLICT on a duplicate (username, email,
// task code, a second validation by the same user), EUNAVAILABLE when the database cannot be reached;
// anything else is internal.
type Store interface {
	// InTx runs fn in one transaction; the Store passed to fn writes inside it. fn's error rolls back.
	InTx(ctx context.Context, fn func(tx Store) error) error

	CreateUser(ctx context.Context, u *User) error
	FindUserByID(ctx context.Context, id int64) (*User, error)
	FindUserByUsername(ctx context.Context, username string) (*User, error)
	FindUsers(ctx context.Context, after int64, limit int) ([]*User, error)
	SetUserAdmin(ctx context.Context, id int64, admin bool) error
	CountUsers(ctx context.Context) (int64, error)

	CreateToken(ctx context.Context, t *Token) error
	// FindTokenUser returns a token by the hash of its value together with its user, in one query
	// (every authenticated request makes it); ENOTFOUND when no token has that hash.
	FindTokenUser(ctx context.Context, hash []byte) (*Token, *User, error)
	FindTokens(ctx context.Context, userID int64) ([]*Token, error)
	// DeleteToken deletes one of the user's tokens; ENOTFOUND when the user has no such token.
	DeleteToken(ctx context.Context, userID, tokenID int64) error

	CreateTask(ctx context.Context, t *Task) error
	FindTaskByCode(ctx context.Context, code string) (*Task, error)
	FindTaskByID(ctx context.Context, id int64) (*Task, error)
	FindTasks(ctx context.Context) ([]*Task, error)
	// UpdateTaskConfig replaces the config text and bumps ConfigRev.
	UpdateTaskConfig(ctx context.Context, taskID int64, source string) error
	UpdateTaskSettings(ctx context.Context, taskID int64, s TaskSettings) error
	AddTaskOwner(ctx context.Context, taskID, userID int64) error
	IsTaskOwner(ctx context.Context, taskID, userID int64) (bool, error)

	// CreateRound inserts the round and makes it the task's current round.
	CreateRound(ctx context.Context, r *Round) error
	FindRound(ctx context.Context, taskID int64, number int) (*Round, error)
	FindRoundByID(ctx context.Context, id int64) (*Round, error)
	FindRounds(ctx context.Context, taskID int64) ([]*Round, error)
	CloseRound(ctx context.Context, roundID int64, at time.Time) error
	SetRoundModels(ctx context.Context, roundID int64, modelIDs []int64) error
	// SetRoundLoopMode sets how several models in the loop answer (LoopRandom, LoopMean, LoopVote).
	SetRoundLoopMode(ctx context.Context, roundID int64, mode string) error

	CreateContexts(ctx context.Context, cs []*Context) error
	FindContextByID(ctx context.Context, id int64) (*Context, error)
	// PickContext chooses a context of the round by the query's strategy; ENOTFOUND when none matches.
	PickContext(ctx context.Context, q ContextQuery) (*Context, error)

	CreateModel(ctx context.Context, m *Model) error
	FindModelByID(ctx context.Context, id int64) (*Model, error)
	FindModels(ctx context.Context, taskID int64) ([]*Model, error)

	CreateExample(ctx context.Context, e *Example) error
	FindExampleByID(ctx context.Context, id int64) (*Example, error)
	// LockExample reads the example and, inside a transaction, locks its row until commit.
	LockExample(ctx context.Context, id int64) (*Example, error)
	// UpdateExample writes the mutable fields: model output/wrong/error, status, flag, metadata, counts.
	UpdateExample(ctx context.Context, e *Example) error
	// ApplyStats adds d to the counters of the example's round, context and user × round.
	ApplyStats(ctx context.Context, e *Example, d StatsDelta) error
	// BumpDailyCount counts one more example by the user in the task on day (YYYY-MM-DD); when max > 0
	// and the count would pass it, nothing changes and ERATELIMIT is returned.
	BumpDailyCount(ctx context.Context, userID, taskID int64, day string, max int) error
	// NextExampleToValidate: not the user's, not retracted, unresolved, not validated by the user;
	// fooling examples first, then fewest validations. ENOTFOUND when none is due.
	NextExampleToValidate(ctx context.Context, q ValidationQuery) (*Example, error)

	// CreateValidation inserts a validation; ECONFLICT when the user already validated the example in that mode.
	CreateValidation(ctx context.Context, v *Validation) error
	FindValidations(ctx context.Context, exampleID int64) ([]*Validation, error)
	// CountValidation adds one to the validator's count in the round.
	CountValidation(ctx context.Context, roundID, userID int64) error

	// AnnotatorStats lists the task's annotators (all rounds when roundID is 0), best first.
	AnnotatorStats(ctx context.Context, taskID, roundID int64, limit int) ([]AnnotatorStats, error)
	// UserStats lists the user's stats per task (summed over rounds), keyed by task code.
	UserStats(ctx context.Context, userID int64) (map[string]AnnotatorStats, error)
	// Recount recomputes every counter from the rows and lists where the stored counters differ.
	Recount(ctx context.Context) ([]Drift, error)

	// Training: reading rounds' examples in bulk, and the trained artifacts behind built-in models.

	// FindExamples lists the examples matching f in id order, at most f.Limit (1 to MaxExamplesPage;
	// 0 means MaxExamplesPage) with ids above f.AfterID: page by passing the last id back as AfterID.
	// EINVALID for a bad limit or too many round ids.
	FindExamples(ctx context.Context, f ExampleFilter) ([]*Example, error)
	// CreateModelArtifact records the trained artifact a model was loaded from. ENOTFOUND when the
	// model does not exist, ECONFLICT when it already has an artifact (artifacts are immutable).
	CreateModelArtifact(ctx context.Context, a *ModelArtifact) error
	// FindModelArtifact returns the artifact record of a model; ENOTFOUND when it has none.
	FindModelArtifact(ctx context.Context, modelID int64) (*ModelArtifact, error)
	// SetModelPublished publishes or unpublishes a model; ENOTFOUND when it does not exist.
	SetModelPublished(ctx context.Context, modelID int64, published bool) error

	// Evaluation datasets.

	// SaveDataset creates the dataset, or replaces the task's dataset of that name (case-insensitive):
	// examples, access, hash and size are replaced and Version goes up by one. Run it inside InTx.
	SaveDataset(ctx context.Context, d *Dataset, examples []*DatasetExample) error
	FindDatasets(ctx context.Context, taskID int64) ([]*Dataset, error)
	FindDatasetByID(ctx context.Context, id int64) (*Dataset, error)
	FindDatasetByName(ctx context.Context, taskID int64, name string) (*Dataset, error)
	// FindDatasetExamples lists one variant of a dataset in Idx order.
	FindDatasetExamples(ctx context.Context, datasetID int64, variant string) ([]*DatasetExample, error)
	// DeleteDataset deletes a dataset with its examples and evaluations; ENOTFOUND when it is gone.
	DeleteDataset(ctx context.Context, id int64) error

	// Evaluations: one per model × dataset × variant.

	// QueueEvaluation creates the evaluation or puts the existing one back in the queue for e's
	// DatasetVersion, clearing its result; e is filled from the stored row.
	QueueEvaluation(ctx context.Context, e *Evaluation) error
	// UpdateEvaluation writes status, fault, reason, result and log; ENOTFOUND when it is gone.
	UpdateEvaluation(ctx context.Context, e *Evaluation) error
	FindEvaluation(ctx context.Context, id int64) (*Evaluation, error)
	FindEvaluations(ctx context.Context, f EvaluationFilter) ([]*Evaluation, error)
	// ScoresVersion is a key that changes whenever the task's leaderboard inputs change.
	ScoresVersion(ctx context.Context, taskID int64) (string, error)

	// Jobs: a durable queue with leases.

	// EnqueueJob adds a job once per idempotency key: a queued or running job is left alone, a done or
	// parked one is queued again from scratch. j is filled from the stored row.
	EnqueueJob(ctx context.Context, j *Job) error
	// LeaseJob leases the next due job (queued and due, or running with an expired lease); ENOTFOUND
	// when none is due. The job's LeaseOwner identifies the lease.
	LeaseJob(ctx context.Context, q JobQuery) (*Job, error)
	// HeartbeatJob extends the lease; ECONFLICT when it is no longer the owner's.
	HeartbeatJob(ctx context.Context, id int64, owner string, until time.Time) error
	// FinishJob ends the lease with JobDone, JobParked or JobQueued (retry at runAfter); ECONFLICT
	// when the lease is lost.
	FinishJob(ctx context.Context, id int64, owner, state, lastError string, runAfter time.Time) error
	FindJob(ctx context.Context, id int64) (*Job, error)
	FindJobByKey(ctx context.Context, key string) (*Job, error)
	// SetJobProgress stores progress (as JSON) in the job's Result under the owner's lease.
	SetJobProgress(ctx context.Context, id int64, owner string, progress any) error

	// Leaderboard forks (saved weights) and snapshots (frozen standings); ECONFLICT on a taken slug.
	CreateLeaderboardFork(ctx context.Context, f *LeaderboardFork) error
	FindLeaderboardFork(ctx context.Context, slug string) (*LeaderboardFork, error)
	CreateLeaderboardSnapshot(ctx context.Context, s *LeaderboardSnapshot) error
	FindLeaderboardSnapshot(ctx context.Context, slug string) (*LeaderboardSnapshot, error)

	// Releases. CreateRelease: ECONFLICT when the round already has that version.
	CreateRelease(ctx context.Context, r *Release) error
	FindReleases(ctx context.Context, taskID int64) ([]*Release, error)
	SetReleasePublic(ctx context.Context, id int64, public bool) error
	// InstallSecret is the install's secret (created on first use), the root of the keys that
	// anonymise exports, split releases and make canaries.
	InstallSecret(ctx context.Context) ([]byte, error)
}

// EvaluationFilter selects evaluations: of one model, of one dataset, or of every model of a task
// (the first non-zero field wins).
type EvaluationFilter struct {
	ModelID   int64
	DatasetID int64
	TaskID    int64
}

// MaxExamplesPage bounds one FindExamples page, and MaxExampleFilterRounds its round list.
const (
	MaxExamplesPage        = 1000
	MaxExampleFilterRounds = 100
)

// ExampleFilter selects examples for FindExamples. Zero fields do not filter, except TaskID, which is
// required.
type ExampleFilter struct {
	TaskID   int64
	RoundIDs []int64 // any of these rounds; all of the task's when empty
	Status   string  // e.g. StatusVerified
	AfterID  int64   // page after this id
	Limit    int
}

// ModelArtifact is the trained artifact behind a built-in model: where its bytes are kept in the blob
// store, their size and hash (so a loaded blob can be checked), and the training manifest (sources,
// seed, hyperparameters, held-out scores) as JSON.
type ModelArtifact struct {
	ModelID   int64
	BlobKey   string
	Size      int64
	SHA256    string // lower-case hex of the blob
	Manifest  map[string]any
	CreatedAt time.Time
}

// StatsDelta is a change in what one example contributes to the counters.
type StatsDelta struct {
	Collected      int64
	Fooled         int64
	VerifiedFooled int64
	Rejected       int64
	RejectedFooled int64
	Retracted      int64
}

// Contribution is what an example in its current state adds to the counters. The rules change
// counters only by the difference of two contributions, so counters always equal a recount.
func Contribution(e *Example) StatsDelta {
	if e.Status == StatusRetracted {
		return StatsDelta{Retracted: 1}
	}
	d := StatsDelta{Collected: 1}
	fooled := e.Fooled()
	if fooled {
		d.Fooled = 1
	}
	switch e.Status {
	case StatusVerified:
		if fooled {
			d.VerifiedFooled = 1
		}
	case StatusRejected:
		d.Rejected = 1
		if fooled {
			d.RejectedFooled = 1
		}
	}
	return d
}

// Sub returns d − o.
func (d StatsDelta) Sub(o StatsDelta) StatsDelta {
	return StatsDelta{
		Collected: d.Collected - o.Collected, Fooled: d.Fooled - o.Fooled,
		VerifiedFooled: d.VerifiedFooled - o.VerifiedFooled, Rejected: d.Rejected - o.Rejected,
		RejectedFooled: d.RejectedFooled - o.RejectedFooled, Retracted: d.Retracted - o.Retracted,
	}
}

// IsZero reports whether the delta changes nothing.
func (d StatsDelta) IsZero() bool { return d == StatsDelta{} }

// Drift is one counter whose stored value differs from a recount of the rows.
type Drift struct {
	Table   string `json:"table"`
	Key     string `json:"key"`
	Counter string `json:"counter"`
	Stored  int64  `json:"stored"`
	Counted int64  `json:"counted"`
}
