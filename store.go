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
