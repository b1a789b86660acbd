package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/release"
)

// JobCycle is the job kind of one turn of the retraining cycle.
const JobCycle = "cycle"

// CycleRequest starts a turn of the cycle: close the task's current round and open the next; with
// Retrain, also release the closed round, train a built-in model on the seed set and every released
// round's train split, publish it and put it in the loop of the new round.
type CycleRequest struct {
	Retrain  bool
	SeedData bool
	Ratios   release.Ratios
}

// CycleStep is one line of a cycle job's progress.
type CycleStep struct {
	At      time.Time `json:"at"`
	Step    string    `json:"step"`
	Message string    `json:"message"`
}

// JobView is a job as its owner sees it: state, attempts, and its progress.
type JobView struct {
	ID        int64           `json:"id,string"`
	Kind      string          `json:"kind"`
	State     string          `json:"state"`
	Attempts  int             `json:"attempts"`
	LastError string          `json:"last_error,omitempty"`
	Progress  json.RawMessage `json:"progress,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// StartCycle queues a turn of the cycle for the task's current round (owners) and returns its job.
// Queuing it twice for the same round is the same job.
func (s *Service) StartCycle(ctx context.Context, actor *dynabench.User, code string, req CycleRequest) (*JobView, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, err
	}
	if req.Ratios != (release.Ratios{}) {
		if err := req.Ratios.Validate(); err != nil {
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, "ratios", "%v", err)
		}
	}
	j := &dynabench.Job{Kind: JobCycle, IdempotencyKey: fmt.Sprintf("cycle:%d:%d", t.ID, t.CurrentRound), MaxAttempts: 2, TaskID: t.ID, UserID: actor.ID,
		Payload: map[string]any{"task": t.Code, "round": t.CurrentRound, "retrain": req.Retrain, "seed_data": req.SeedData,
			"ratios": map[string]any{"train": req.Ratios.Train, "dev": req.Ratios.Dev, "test": req.Ratios.Test}, "actor": actor.ID}}
	if err := s.Store.EnqueueJob(ctx, j); err != nil {
		return nil, err
	}
	s.wakeWorkers()
	return s.jobView(ctx, j)
}

// Job returns a job to the task's owners (cycle jobs) or to its owner.
func (s *Service) Job(ctx context.Context, actor *dynabench.User, id int64) (*JobView, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	j, err := s.Store.FindJob(ctx, id)
	if err != nil {
		return nil, err
	}
	if !actor.Admin && j.UserID != actor.ID {
		ok := false
		if j.TaskID != 0 {
			if t, err := s.Store.FindTaskByID(ctx, j.TaskID); err == nil {
				ok, _ = s.CanOwn(ctx, actor, t)
			}
		}
		if !ok {
			return nil, dynabench.Errorf(dynabench.ENOTFOUND, "job not found")
		}
	}
	return s.jobView(ctx, j)
}

func (s *Service) jobView(ctx context.Context, j *dynabench.Job) (*JobView, error) {
	cur, err := s.Store.FindJob(ctx, j.ID)
	if err != nil {
		return nil, err
	}
	v := &JobView{ID: cur.ID, Kind: cur.Kind, State: cur.State, Attempts: cur.Attempts, LastError: cur.LastError,
		CreatedAt: cur.CreatedAt, UpdatedAt: cur.UpdatedAt}
	if len(cur.Result) > 0 && string(cur.Result) != "{}" {
		v.Progress = json.RawMessage(cur.Result)
	}
	return v, nil
}

// RunCycleJob runs a leased cycle job. Each step first checks whether an earlier attempt already
// did it (the round already closed, the release already made, the model already trained), so a
// retried job resumes instead of repeating. report records a step in the job's progress.
func (s *Service) RunCycleJob(ctx context.Context, j *dynabench.Job, report func(step, msg string)) error {
	code, _ := j.Payload["task"].(string)
	from := int(num(j.Payload["round"]))
	actorID := int64(num(j.Payload["actor"]))
	retrain, _ := j.Payload["retrain"].(bool)
	seedData, _ := j.Payload["seed_data"].(bool)
	rm, _ := j.Payload["ratios"].(map[string]any)
	ratios := release.Ratios{Train: num(rm["train"]), Dev: num(rm["dev"]), Test: num(rm["test"])}
	actor, err := s.Store.FindUserByID(ctx, actorID)
	if err != nil {
		return err
	}
	t, err := s.Task(ctx, code)
	if err != nil {
		return err
	}
	closed, err := s.Round(ctx, t, from)
	if err != nil {
		return err
	}
	// 1. Close the round by opening the next (with the same models), unless done already.
	if t.CurrentRound == from {
		next, err := s.NextRound(ctx, actor, code, closed.ModelIDs, closed.LoopMode)
		if err != nil {
			return err
		}
		report("close", fmt.Sprintf("round %d closed (%d examples, %d verified fooling, vMER %.1f%%); round %d open",
			from, closed.Stats.Collected, closed.Stats.VerifiedFooled, 100*closed.Stats.VMER, next.Number))
	} else {
		report("close", fmt.Sprintf("round %d was already closed", from))
	}
	if !retrain {
		return nil
	}
	// 2. Release it, unless an earlier attempt did.
	rels, err := s.Store.FindReleases(ctx, t.ID)
	if err != nil {
		return err
	}
	released := false
	for _, r := range rels {
		released = released || r.RoundNumber == from
	}
	if !released {
		res, err := s.ReleaseRound(ctx, actor, code, from, ReleaseRequest{Ratios: ratios})
		if err != nil {
			return err
		}
		ds := "no test split"
		if res.Dataset != nil {
			ds = fmt.Sprintf("test split %s (%d examples)", res.Dataset.Name, res.Dataset.Size)
		}
		report("release", fmt.Sprintf("round %d released as version %d: %d examples, %s", from, res.Release.Version, res.Manifest.Examples, ds))
	} else {
		report("release", fmt.Sprintf("round %d was already released", from))
	}
	// 3. Train on the seed set and every released round's train split.
	if rels, err = s.Store.FindReleases(ctx, t.ID); err != nil {
		return err
	}
	var rounds []int
	for _, r := range rels {
		if len(rounds) == 0 || rounds[len(rounds)-1] != r.RoundNumber {
			rounds = append(rounds, r.RoundNumber)
		}
	}
	name := fmt.Sprintf("%s-builtin-r%d", code, from+1)
	models, err := s.Store.FindModels(ctx, t.ID)
	if err != nil {
		return err
	}
	var m *dynabench.Model
	for _, x := range models {
		if x.Name == name && x.Kind == dynabench.KindBuiltin {
			m = x
		}
	}
	if m == nil {
		report("train", fmt.Sprintf("training %s on %s released rounds %v (train splits only)", name,
			map[bool]string{true: "the seed set and", false: "the"}[seedData], rounds))
		t0 := s.Now()
		if m, _, err = s.TrainModel(ctx, actor, code, TrainRequest{Name: name, Rounds: rounds, SeedData: seedData, ReleasedOnly: true, Publish: true}); err != nil {
			return err
		}
		report("train", fmt.Sprintf("trained %s (model %d) in %s; its evaluation is queued on every dataset", m.Name, m.ID, s.Now().Sub(t0).Round(time.Millisecond)))
	} else {
		report("train", fmt.Sprintf("%s (model %d) was already trained", m.Name, m.ID))
	}
	// 4. Put it in the loop of the new round.
	t, err = s.Task(ctx, code)
	if err != nil {
		return err
	}
	cur, err := s.Round(ctx, t, t.CurrentRound)
	if err != nil {
		return err
	}
	if _, err := s.SetRoundModels(ctx, actor, code, cur.Number, []int64{m.ID}, cur.LoopMode); err != nil {
		return err
	}
	report("loop", fmt.Sprintf("%s is the model in the loop of round %d", m.Name, cur.Number))
	return nil
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// RunJobs runs the platform's own (non-evaluation) jobs until ctx ends: cycle jobs today.
func (s *Service) RunJobs(ctx context.Context, worker string) {
	for ctx.Err() == nil {
		j, err := s.Store.LeaseJob(ctx, dynabench.JobQuery{Worker: worker, Kinds: []string{JobCycle}, Lease: 10 * time.Minute})
		if err != nil {
			if !dynabench.IsCode(err, dynabench.ENOTFOUND) && ctx.Err() == nil {
				s.Log.Warn("jobs: lease failed", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		var steps []CycleStep
		report := func(step, msg string) {
			steps = append(steps, CycleStep{At: s.Now().UTC(), Step: step, Message: msg})
			if err := s.Store.SetJobProgress(ctx, j.ID, j.LeaseOwner, steps); err != nil {
				s.Log.Warn("jobs: progress not saved", "job", j.ID, "err", err)
			}
		}
		err = s.RunCycleJob(ctx, j, report)
		state, msg, at := dynabench.JobDone, "", s.Now()
		if err != nil {
			msg = err.Error()
			var de *dynabench.Error
			if errors.As(err, &de) {
				msg = strings.TrimSpace(de.Field + ": " + de.Message)
			}
			report("failed", msg)
			state = dynabench.JobParked
			if j.Attempts < j.MaxAttempts && !errors.As(err, &de) {
				state, at = dynabench.JobQueued, s.Now().Add(backoff(s.RetryBackoff, j.Attempts))
			}
		}
		if err := s.Store.FinishJob(context.WithoutCancel(ctx), j.ID, j.LeaseOwner, state, msg, at); err != nil {
			s.Log.Warn("jobs: finish failed", "job", j.ID, "err", err)
		}
	}
}
