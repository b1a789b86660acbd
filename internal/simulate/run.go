package simulate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
)

// Loop is the platform as annotators see it, one method per action. Writers and validators are numbered
// from 0; the implementation maps them to distinct users (writers and validators never overlap), over the
// real API or in memory.
type Loop interface {
	// PickContext hands writer a context of the task's current round.
	PickContext(ctx context.Context, task string, writer int) (Context, error)
	// Submit stores writer's input (its label included) against the context and returns whether the model
	// in the loop got it wrong, and the example's id.
	Submit(ctx context.Context, task string, writer int, c Context, input map[string]any) (modelWrong bool, exampleID int64, err error)
	// NextToValidate returns the next example validator should judge; ok is false when there is none.
	NextToValidate(ctx context.Context, task string, validator int) (p Pending, ok bool, err error)
	// Validate records validator's verdict on an example: correct, or incorrect.
	Validate(ctx context.Context, task string, validator int, exampleID int64, correct bool) error
	// Verified reports whether the platform has verified an example (enough validators agreed it is
	// correct).
	Verified(ctx context.Context, task string, exampleID int64) (bool, error)
}

// Pending is an example waiting for validation.
type Pending struct {
	ExampleID int64
	Input     map[string]any
}

// Plan is one round of simulation.
type Plan struct {
	Task              string
	Round             int // 1-based; later rounds unlock harder strategies
	Writers           int
	ExamplesPerWriter int
	Validators        int
	Seed              uint64
	// MislabelRate is the share of attempts whose submitted label is wrong (an honest slip): validators
	// should reject them, so vMER < MER.
	MislabelRate float64
	// NoiseRate is the share of votes a validator gets wrong.
	NoiseRate float64
	// Writer overrides NewWriter(Task).
	Writer Writer
}

// RoundStats are what a round produced.
type RoundStats struct {
	Task           string
	Round          int
	Submitted      int
	Fooled         int // model_wrong at submission
	VerifiedFooled int // fooled and verified
	Mislabelled    int // submitted with a wrong label
	Validations    int
	ByStrategy     map[string]*StrategyStats
}

// StrategyStats count one strategy's attempts.
type StrategyStats struct {
	Submitted, Fooled, VerifiedFooled int
}

// MER is fooled / submitted.
func (s RoundStats) MER() float64 { return ratio(s.Fooled, s.Submitted) }

// VMER is verified fooled / submitted, as Dynabench reports it.
func (s RoundStats) VMER() float64 { return ratio(s.VerifiedFooled, s.Submitted) }

// Rate is a strategy's fooling rate.
func (s StrategyStats) Rate() float64 { return ratio(s.Fooled, s.Submitted) }

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func (p *Plan) validate() error {
	switch {
	case p.Round < 1:
		return fmt.Errorf("simulate: round must be ≥ 1, is %d", p.Round)
	case p.Writers < 1 || p.ExamplesPerWriter < 1:
		return fmt.Errorf("simulate: need writers and examples, have %d × %d", p.Writers, p.ExamplesPerWriter)
	case p.Validators < 0:
		return fmt.Errorf("simulate: validators must be ≥ 0, is %d", p.Validators)
	case p.MislabelRate < 0 || p.MislabelRate > 1 || p.NoiseRate < 0 || p.NoiseRate > 1:
		return errors.New("simulate: rates must be between 0 and 1")
	}
	return nil
}

// written is what Run remembers of an example it submitted.
type written struct {
	att    Attempt
	fooled bool
}

// Run plays one round: every writer writes ExamplesPerWriter examples (taking turns), then validators
// take turns judging until the platform has nothing left for any of them. Everything random comes from
// the seed, the round and the annotator's number, so a run against a deterministic Loop is reproducible.
func Run(ctx context.Context, loop Loop, p Plan) (*RoundStats, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	w := p.Writer
	if w == nil {
		var err error
		if w, err = NewWriter(p.Task); err != nil {
			return nil, err
		}
	}
	st := &RoundStats{Task: p.Task, Round: p.Round, ByStrategy: map[string]*StrategyStats{}}
	byID := map[int64]*written{}
	rngs := make([]*rand.Rand, p.Writers)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(p.Seed, uint64(p.Round)<<32|uint64(i)))
	}
	for range p.ExamplesPerWriter {
		for wi := range p.Writers {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := write(ctx, loop, p, w, wi, rngs[wi], st, byID); err != nil {
				return nil, err
			}
		}
	}
	if err := validateAll(ctx, loop, p, st, byID); err != nil {
		return nil, err
	}
	return st, tally(ctx, loop, p, st, byID)
}

func write(ctx context.Context, loop Loop, p Plan, w Writer, wi int, rng *rand.Rand, st *RoundStats, byID map[int64]*written) error {
	c, err := loop.PickContext(ctx, p.Task, wi)
	if err != nil {
		return fmt.Errorf("simulate: writer %d: context: %w", wi, err)
	}
	att, err := w.Write(c, p.Round, rng)
	if err != nil {
		return err
	}
	if rng.Float64() < p.MislabelRate {
		att = mislabel(att, p.Task, rng)
		st.Mislabelled++
	}
	wrong, id, err := loop.Submit(ctx, p.Task, wi, c, att.Input)
	if err != nil {
		return fmt.Errorf("simulate: writer %d: submit: %w", wi, err)
	}
	byID[id] = &written{att: att, fooled: wrong}
	s := st.ByStrategy[att.Strategy]
	if s == nil {
		s = &StrategyStats{}
		st.ByStrategy[att.Strategy] = s
	}
	st.Submitted++
	s.Submitted++
	if wrong {
		st.Fooled++
		s.Fooled++
	}
	return nil
}

// mislabel submits another label than the gold one.
func mislabel(a Attempt, task string, rng *rand.Rand) Attempt {
	labels := Labels(task)
	others := slices.DeleteFunc(slices.Clone(labels), func(l string) bool { return l == a.Gold })
	if len(others) == 0 {
		return a
	}
	a.Label = pick(rng, others)
	in := make(map[string]any, len(a.Input))
	for k, v := range a.Input {
		in[k] = v
	}
	in["label"] = a.Label
	a.Input = in
	return a
}

// Labels returns a demo task's labels.
func Labels(task string) []string {
	switch task {
	case "nli":
		return []string{"entailed", "neutral", "contradictory"}
	case "sentiment":
		return []string{"positive", "negative", "neutral"}
	}
	return nil
}

// Vote is a validator's verdict: correct iff the submitted label is the gold one, flipped with
// probability noise.
func Vote(submitted, gold string, noise float64, rng *rand.Rand) bool {
	correct := submitted == gold
	if noise > 0 && rng.Float64() < noise {
		return !correct
	}
	return correct
}

func validateAll(ctx context.Context, loop Loop, p Plan, st *RoundStats, byID map[int64]*written) error {
	rngs := make([]*rand.Rand, p.Validators)
	done := make([]bool, p.Validators)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(p.Seed^0x76616c6964617465, uint64(p.Round)<<32|uint64(i)))
	}
	// Each example needs at most a few votes per validator: the bound stops a Loop that keeps serving.
	for steps, left := 0, p.Validators; left > 0; steps++ {
		if steps > (st.Submitted+1)*(p.Validators+1) {
			return fmt.Errorf("simulate: validation did not finish after %d votes", st.Validations)
		}
		vi := steps % p.Validators
		if done[vi] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		pend, ok, err := loop.NextToValidate(ctx, p.Task, vi)
		if err != nil {
			return fmt.Errorf("simulate: validator %d: %w", vi, err)
		}
		ex := byID[pend.ExampleID]
		if !ok || ex == nil { // nothing left, or not ours: this validator stops
			done[vi] = true
			left--
			continue
		}
		label, _ := pend.Input["label"].(string)
		vote := Vote(label, ex.att.Gold, p.NoiseRate, rngs[vi])
		if err := loop.Validate(ctx, p.Task, vi, pend.ExampleID, vote); err != nil {
			return fmt.Errorf("simulate: validator %d: example %d: %w", vi, pend.ExampleID, err)
		}
		st.Validations++
	}
	return nil
}

func tally(ctx context.Context, loop Loop, p Plan, st *RoundStats, byID map[int64]*written) error {
	ids := make([]int64, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		ex := byID[id]
		if !ex.fooled {
			continue
		}
		ok, err := loop.Verified(ctx, p.Task, id)
		if err != nil {
			return fmt.Errorf("simulate: example %d: %w", id, err)
		}
		if ok {
			st.VerifiedFooled++
			st.ByStrategy[ex.att.Strategy].VerifiedFooled++
		}
	}
	return nil
}
