package release

import (
	"strconv"
	"time"
)

// Record is one released example as the store hands it over. Person values are raw ids: encoders replace
// them with keyed hashes and never write them out.
type Record struct {
	ID  int64  // the example's id in the store
	UID string // a public id, e.g. an imported dataset's uid; by default the decimal ID
	// Round is the round number within the task (1-based).
	Round       int
	ContextID   int64
	Context     map[string]any // the context fields, by config name
	Input       map[string]any // what the annotator entered, the target (label, answer) included
	ModelName   string         // the model in the loop that answered
	ModelOutput map[string]any // its answer
	ModelWrong  *bool          // nil when undecided or the model failed
	Flagged     bool
	Retracted   bool
	Tag         string   // the context's tag
	Tags        []string // example tags, for per-tag scores
	Metadata    map[string]any
	Creator     Person
	Validations []Validation
	CreatedAt   time.Time
	// Split is filled in by WriteRelease; encoders write it when set.
	Split string
}

// Person is a contributor: a platform user, or an external crowd worker who has no user id.
type Person struct {
	UserID   int64
	WorkerID string
}

// Validation is one validator's verdict on a record.
type Validation struct {
	Validator Person
	Label     string // correct, incorrect or flagged
	Mode      string // user or owner
	Metadata  map[string]any
}

// PublicID is the id written out: UID, or the decimal ID.
func (r *Record) PublicID() string {
	if r.UID != "" {
		return r.UID
	}
	return strconv.FormatInt(r.ID, 10)
}

// Schema names a task's fields, from its config, so that flat formats have stable columns.
type Schema struct {
	Context []string // context field names
	Input   []string // annotator input field names, the target included
	Output  []string // model output field names
	// Label is the input field holding the gold label, counted per split in the manifest; empty for
	// tasks without labels (QA).
	Label string
}

// scrubbed are metadata keys that may identify a person; encoders drop them. Dynabench keeps a crowd
// worker's id in metadata_json.annotator_id, and exports it.
var scrubbed = map[string]bool{
	"annotator_id": true, "worker_id": true, "user_id": true, "uid": true, "username": true,
	"user_name": true, "email": true, "ip": true, "assignment_id": true, "hit_id": true,
}

func scrub(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !scrubbed[k] {
			out[k] = v
		}
	}
	return out
}
