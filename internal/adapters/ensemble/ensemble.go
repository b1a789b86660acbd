// Package ensemble composes predictors into one: averaging them (Mean), letting them vote (Vote), or
// asking one of them picked at random per example (Random, as Dynabench puts one of a round's models
// in front of each example).
//
// A member that fails, or answers something the task cannot read, is skipped as long as another
// member answers; the answer records who answered and who was skipped under the key "ensemble"
// (the platform's output check drops that key; callers that want it read it first), and Stats counts
// both per member. When every member fails, the error is the first member's (in member order; for
// Random, the first one tried).
//
// Mean, classification: each member's prob (normalised; a member without prob counts as certain of
// its label) is averaged per label and the label is the most probable, ties going to the earlier
// task label. Mean, QA: answers are grouped by their normalised text (SQuAD normalisation) and the
// group with the highest summed conf wins (a member without conf counts 1), ties going to the earlier
// member; conf is that sum over the number of members that answered.
//
// Vote: the label most members gave, ties broken by the mean prob and then by label order; prob is
// the mean prob. For QA, the answer most members gave, ties broken by summed conf, then member order.
package ensemble

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

// Mode is how an ensemble combines its members.
type Mode string

// Ensemble modes.
const (
	Mean   Mode = "mean"
	Vote   Mode = "vote"
	Random Mode = "random"
)

// RecordField is the output key under which an ensemble records which members answered and which
// were skipped (with their errors): {"mode", "answered": [names], "skipped": {name: "kind: message"}}.
const RecordField = "ensemble"

// Member is one predictor of an ensemble, named for records and stats.
type Member struct {
	Name      string
	Predictor dynabench.Predictor
}

// MemberStats counts, for one member, the examples it answered and those it was skipped on.
type MemberStats struct {
	Name     string `json:"name"`
	Answered int64  `json:"answered"`
	Skipped  int64  `json:"skipped"`
}

// Ensemble is a dynabench.Predictor over several members. It is safe for concurrent use.
type Ensemble struct {
	spec     spec.Spec
	mode     Mode
	members  []Member
	answered []atomic.Int64
	skipped  []atomic.Int64

	mu  sync.Mutex // guards rnd
	rnd *rand.Rand // nil: the global source
}

// New builds an ensemble. src is the random source of Random (nil: the global one); it is only
// read under a lock, so it need not be safe for concurrent use.
func New(sp spec.Spec, mode Mode, members []Member, src rand.Source) (*Ensemble, error) {
	switch {
	case len(members) == 0:
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "members", "an ensemble needs at least one member")
	case mode != Mean && mode != Vote && mode != Random:
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "mode", "%q is not mean, vote or random", mode)
	case mode != Random && sp.Kind != spec.Classification && sp.Kind != spec.ExtractiveQA:
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "mode", "%s needs a classification or extractive QA task", mode)
	}
	seen := map[string]bool{}
	for i, m := range members {
		if m.Name == "" || seen[m.Name] || m.Predictor == nil {
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("members[%d]", i),
				"every member needs a predictor and a unique, non-empty name")
		}
		seen[m.Name] = true
	}
	e := &Ensemble{spec: sp, mode: mode, members: members,
		answered: make([]atomic.Int64, len(members)), skipped: make([]atomic.Int64, len(members))}
	if src != nil {
		e.rnd = rand.New(src)
	}
	return e, nil
}

// Stats returns per-member counts, in member order.
func (e *Ensemble) Stats() []MemberStats {
	out := make([]MemberStats, len(e.members))
	for i, m := range e.members {
		out[i] = MemberStats{Name: m.Name, Answered: e.answered[i].Load(), Skipped: e.skipped[i].Load()}
	}
	return out
}

// Members returns the members, in order (for per-member health on an owner page).
func (e *Ensemble) Members() []Member { return append([]Member(nil), e.members...) }

func (e *Ensemble) pick() int {
	if e.rnd == nil {
		return rand.IntN(len(e.members))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rnd.IntN(len(e.members))
}

// Predict implements dynabench.Predictor.
func (e *Ensemble) Predict(ctx context.Context, input map[string]any) (map[string]any, error) {
	if e.mode == Random {
		return e.predictRandom(ctx, input)
	}
	outs := make([]map[string]any, len(e.members))
	errs := make([]error, len(e.members))
	var wg sync.WaitGroup
	for i, m := range e.members {
		wg.Go(func() { outs[i], errs[i] = m.Predictor.Predict(ctx, input) })
	}
	wg.Wait()
	return e.combine(outs, errs)
}

// predictRandom asks the picked member, then the next ones in turn if it fails.
func (e *Ensemble) predictRandom(ctx context.Context, input map[string]any) (map[string]any, error) {
	start := e.pick()
	rec := newRecord(e.mode)
	var first error
	for k := range e.members {
		i := (start + k) % len(e.members)
		out, err := e.members[i].Predictor.Predict(ctx, input)
		if err == nil {
			out, err = e.spec.Check(out)
		}
		if err != nil {
			first = cmpFirst(first, err)
			e.skip(i, rec, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		e.answer(i, rec)
		out[RecordField] = rec.value()
		return out, nil
	}
	return nil, first
}

func cmpFirst(first, err error) error {
	if first == nil {
		return err
	}
	return first
}

// combine merges the members' answers to one example; errs[i] is member i's failure.
func (e *Ensemble) combine(outs []map[string]any, errs []error) (map[string]any, error) {
	rec := newRecord(e.mode)
	var answers []answer
	var first error
	for i := range e.members {
		var a answer
		err := errs[i]
		if err == nil {
			a, err = e.read(i, outs[i])
		}
		if err != nil {
			first = cmpFirst(first, err)
			e.skip(i, rec, err)
			continue
		}
		e.answer(i, rec)
		answers = append(answers, a)
	}
	if len(answers) == 0 {
		return nil, first
	}
	var out map[string]any
	if e.spec.Kind == spec.ExtractiveQA {
		out = e.combineQA(answers)
	} else {
		out = e.combineLabels(answers)
	}
	out[RecordField] = rec.value()
	return out, nil
}

func (e *Ensemble) skip(i int, rec *record, err error) {
	e.skipped[i].Add(1)
	e.skipRecord(i, rec, err)
}

func (e *Ensemble) skipRecord(i int, rec *record, err error) {
	me := dynabench.AsModelError(err)
	rec.skipped[e.members[i].Name] = me.Kind + ": " + me.Err.Error()
}

func (e *Ensemble) answer(i int, rec *record) {
	e.answered[i].Add(1)
	rec.answered = append(rec.answered, e.members[i].Name)
}

// record is what an answer says about its members.
type record struct {
	mode     Mode
	answered []any
	skipped  map[string]any
}

func newRecord(mode Mode) *record {
	return &record{mode: mode, answered: []any{}, skipped: map[string]any{}}
}

func (r *record) value() map[string]any {
	return map[string]any{"mode": string(r.mode), "answered": r.answered, "skipped": r.skipped}
}
