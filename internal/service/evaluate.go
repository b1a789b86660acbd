package service

import (
	"context"
	"fmt"
	"time"

	"github.com/dynabench-go/dynabench"
)

// JobEvaluate is the job kind of one model scored on one dataset variant.
const JobEvaluate = "evaluate"

// evalMaxAttempts bounds the tries of one evaluation; a model that keeps failing is parked.
const evalMaxAttempts = 3

// variantsOf lists the variants a dataset is evaluated on: itself, and each perturbed copy it has.
func variantsOf(d *dynabench.Dataset) []string {
	out := []string{dynabench.VariantOriginal}
	for _, v := range []string{dynabench.VariantRobustness, dynabench.VariantFairness} {
		if d.Variants[v] > 0 {
			out = append(out, v)
		}
	}
	return out
}

// queueEvaluations queues the model on every variant of the datasets, in the caller's transaction:
// one evaluation row and one job each. A job already queued or running is left alone (it reads the
// dataset's version when it starts, and a result for an older version is discarded).
func (s *Service) queueEvaluations(ctx context.Context, tx dynabench.Store, t *dynabench.Task, m *dynabench.Model, ds []*dynabench.Dataset) error {
	for _, d := range ds {
		for _, v := range variantsOf(d) {
			ev := &dynabench.Evaluation{ModelID: m.ID, DatasetID: d.ID, Variant: v, DatasetVersion: d.Version}
			if err := tx.QueueEvaluation(ctx, ev); err != nil {
				return err
			}
			j := &dynabench.Job{Kind: JobEvaluate, IdempotencyKey: fmt.Sprintf("evaluate:%d", ev.ID),
				Payload: map[string]any{"evaluation_id": ev.ID}, MaxAttempts: evalMaxAttempts, UserID: m.UserID, TaskID: t.ID}
			if m.Kind == dynabench.KindBuiltin {
				j.Kind = JobEvaluateBuiltin // its artifact stays on the server
			}
			if d.Access == dynabench.AccessHidden {
				j.UserID = 0 // a hidden dataset's inputs never leave the platform's own workers
			}
			if err := tx.EnqueueJob(ctx, j); err != nil {
				return err
			}
		}
	}
	return nil
}

// queueModel queues a model on every dataset of its task.
func (s *Service) queueModel(ctx context.Context, t *dynabench.Task, m *dynabench.Model) error {
	err := s.Store.InTx(ctx, func(tx dynabench.Store) error {
		ds, err := tx.FindDatasets(ctx, t.ID)
		if err != nil {
			return err
		}
		return s.queueEvaluations(ctx, tx, t, m, ds)
	})
	if err == nil {
		s.wakeWorkers()
	}
	return err
}

// wakeWorkers tells in-process workers that a job may be due, so they need not wait for their poll.
func (s *Service) wakeWorkers() {
	select {
	case s.jobsReady <- struct{}{}:
	default:
	}
}

// JobsReady is signalled (without blocking) when jobs were queued; in-process workers wait on it.
func (s *Service) JobsReady() <-chan struct{} { return s.jobsReady }

// EvaluateModel queues the model on every dataset again (model owner, task owners, admins).
func (s *Service) EvaluateModel(ctx context.Context, actor *dynabench.User, id int64) (*dynabench.Model, error) {
	m, t, err := s.modelForChange(ctx, actor, id, true)
	if err != nil {
		return nil, err
	}
	return m, s.queueModel(ctx, t, m)
}

// PublishModel shows the model on the leaderboard and to everyone (model owner and admins).
func (s *Service) PublishModel(ctx context.Context, actor *dynabench.User, id int64, published bool) (*dynabench.Model, error) {
	m, _, err := s.modelForChange(ctx, actor, id, false)
	if err != nil {
		return nil, err
	}
	if err := s.Store.SetModelPublished(ctx, m.ID, published); err != nil {
		return nil, err
	}
	m.Published = published
	return m, nil
}

// modelForChange finds a model the actor may change: its registrant, an admin, and (when
// taskOwners) the task's owners. Others get 404 for models they cannot see and 403 otherwise.
func (s *Service) modelForChange(ctx context.Context, actor *dynabench.User, id int64, taskOwners bool) (*dynabench.Model, *dynabench.Task, error) {
	if err := requireUser(actor); err != nil {
		return nil, nil, err
	}
	m, t, err := s.Model(ctx, actor, id)
	if err != nil {
		return nil, nil, err
	}
	if m.UserID == actor.ID || actor.Admin {
		return m, t, nil
	}
	if taskOwners {
		if ok, err := s.CanOwn(ctx, actor, t); err != nil {
			return nil, nil, err
		} else if ok {
			return m, t, nil
		}
	}
	return nil, nil, dynabench.Errorf(dynabench.EFORBIDDEN, "only the model's owner may do this")
}

// DatasetStatus is a model's evaluation on one dataset, its variants folded in.
type DatasetStatus struct {
	Dataset *dynabench.Dataset
	// Status is the least finished of its variants' statuses: failed, running, queued, completed.
	Status string
	Reason string
	Fault  string
	// Variants holds every variant's evaluation, the dataset itself first.
	Variants []*dynabench.Evaluation
}

// ModelEvaluations lists the model's evaluations per dataset the actor may see (hidden datasets
// only for the task's owners).
func (s *Service) ModelEvaluations(ctx context.Context, actor *dynabench.User, m *dynabench.Model, t *dynabench.Task) ([]DatasetStatus, error) {
	ds, err := s.Store.FindDatasets(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	owner, err := s.CanOwn(ctx, actor, t)
	if err != nil {
		return nil, err
	}
	evs, err := s.Store.FindEvaluations(ctx, dynabench.EvaluationFilter{ModelID: m.ID})
	if err != nil {
		return nil, err
	}
	byDataset := map[int64][]*dynabench.Evaluation{}
	for _, e := range evs {
		byDataset[e.DatasetID] = append(byDataset[e.DatasetID], e)
	}
	var out []DatasetStatus
	for _, d := range ds {
		if d.Access == dynabench.AccessHidden && !owner {
			continue
		}
		st := DatasetStatus{Dataset: d, Status: dynabench.EvalCompleted}
		list := byDataset[d.ID]
		if len(list) == 0 {
			st.Status = dynabench.EvalQueued
		}
		rank := map[string]int{dynabench.EvalCompleted: 0, dynabench.EvalQueued: 1, dynabench.EvalRunning: 2, dynabench.EvalFailed: 3}
		for _, v := range []string{dynabench.VariantOriginal, dynabench.VariantRobustness, dynabench.VariantFairness} {
			for _, e := range list {
				if e.Variant != v {
					continue
				}
				st.Variants = append(st.Variants, e)
				if rank[e.Status] > rank[st.Status] {
					st.Status, st.Reason, st.Fault = e.Status, e.Reason, e.Fault
				}
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// checkSubmissionQuota refuses a submission past the task's daily quota for the user. A submission
// counts when it completed, when the model failed, or while it is still being evaluated; one the
// platform failed does not. Owners and admins have no quota.
func (s *Service) checkSubmissionQuota(ctx context.Context, actor *dynabench.User, t *dynabench.Task) error {
	max := t.Settings.MaxSubmissionsPerDay
	if max <= 0 {
		return nil
	}
	if owner, err := s.CanOwn(ctx, actor, t); err != nil || owner {
		return err
	}
	models, err := s.Store.FindModels(ctx, t.ID)
	if err != nil {
		return err
	}
	dayStart := s.Now().UTC().Truncate(24 * time.Hour)
	used := 0
	for _, m := range models {
		if m.UserID != actor.ID || m.CreatedAt.Before(dayStart) {
			continue
		}
		evs, err := s.Store.FindEvaluations(ctx, dynabench.EvaluationFilter{ModelID: m.ID})
		if err != nil {
			return err
		}
		if !platformFailed(evs) {
			used++
		}
	}
	if used >= max {
		return dynabench.Errorf(dynabench.ERATELIMIT,
			"you have used today's %d submissions to this task; submissions the platform failed are not counted", max)
	}
	return nil
}

// platformFailed reports whether a submission's evaluation failed through no fault of the model.
func platformFailed(evs []*dynabench.Evaluation) bool {
	for _, e := range evs {
		if e.Status == dynabench.EvalFailed && e.Fault == dynabench.FaultPlatform {
			return true
		}
	}
	return false
}
