package service

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/evaluation"
	"github.com/dynabench-go/dynabench/internal/perturb"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// System is the actor of the platform's own in-process workers. No request can act as it: the API
// derives every actor from a token.
var System = &dynabench.User{Username: "system", Admin: true}

// Job kinds of evaluations: a model served over HTTP can be evaluated by any worker, a built-in
// model only by the server's in-process workers (its artifact stays on the server).
const JobEvaluateBuiltin = "evaluate-builtin"

// Work is a leased evaluation: what a worker needs to call the model and report back.
type Work struct {
	JobID          int64            `json:"job_id"`
	Lease          string           `json:"lease"`
	LeaseUntil     time.Time        `json:"lease_until"`
	Attempt        int              `json:"attempt"`
	MaxAttempts    int              `json:"max_attempts"`
	EvaluationID   int64            `json:"evaluation_id"`
	Task           string           `json:"task"`
	Model          *dynabench.Model `json:"-"`
	Dataset        string           `json:"dataset"`
	DatasetVersion int              `json:"dataset_version"`
	Variant        string           `json:"variant"`
	// Inputs are the model's inputs, in order. For a perturbed copy: the perturbed examples first,
	// then the distinct originals they came from.
	Inputs []WorkInput `json:"inputs"`
}

// WorkInput is one input to send to the model.
type WorkInput struct {
	UID   string         `json:"uid"`
	Input map[string]any `json:"input"`
}

// WorkReport is what a worker measured: one output per input, in order.
type WorkReport struct {
	DatasetVersion    int              `json:"dataset_version"`
	Outputs           []map[string]any `json:"outputs"`
	ExamplesPerSecond float64          `json:"examples_per_second,omitempty"`
	MemoryGiB         *float64         `json:"memory_gib,omitempty"`
	Log               string           `json:"log,omitempty"`
}

// WorkFailure is why a worker could not finish: Fault says whether the model or the platform failed,
// Retry whether trying again may help (a timeout may; a malformed answer will not).
type WorkFailure struct {
	Reason string `json:"reason"`
	Fault  string `json:"fault"`
	Retry  bool   `json:"retry,omitempty"`
}

// DefaultJobLease is how long a worker holds a job between heartbeats.
const DefaultJobLease = 60 * time.Second

const maxLog = 16 << 10

// LeaseWork leases the next due evaluation. Admins' workers (and the in-process ones) take any
// job; a model builder's worker only jobs of the builder's own models on datasets that are not
// hidden. ENOTFOUND when nothing is due.
func (s *Service) LeaseWork(ctx context.Context, actor *dynabench.User, worker string, kinds []string) (*Work, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	if worker == "" || len(worker) > 100 {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "worker", "a worker name of 1 to 100 bytes")
	}
	if len(kinds) == 0 {
		kinds = []string{JobEvaluate}
	}
	for _, k := range kinds {
		if k != JobEvaluate && (k != JobEvaluateBuiltin || actor != System) {
			return nil, dynabench.FieldErrorf(dynabench.EINVALID, "kinds", "workers lease %q jobs", JobEvaluate)
		}
	}
	q := dynabench.JobQuery{Worker: worker, Kinds: kinds, Lease: s.JobLease}
	if !actor.Admin {
		q.UserID = actor.ID
	}
	for {
		j, err := s.Store.LeaseJob(ctx, q)
		if err != nil {
			return nil, err
		}
		w, err := s.prepareWork(ctx, j)
		if err == nil {
			return w, nil
		}
		if !dynabench.IsCode(err, dynabench.ENOTFOUND) {
			return nil, err
		}
		// The model, dataset or evaluation is gone: the job has nothing left to do.
		if err := s.Store.FinishJob(ctx, j.ID, j.LeaseOwner, dynabench.JobDone, "nothing to do: "+err.Error(), s.Now()); err != nil {
			return nil, err
		}
	}
}

// prepareWork marks the leased job's evaluation running and gathers its inputs.
func (s *Service) prepareWork(ctx context.Context, j *dynabench.Job) (*Work, error) {
	id, _ := j.Payload["evaluation_id"].(float64)
	ev, err := s.Store.FindEvaluation(ctx, int64(id))
	if err != nil {
		return nil, err
	}
	m, err := s.Store.FindModelByID(ctx, ev.ModelID)
	if err != nil {
		return nil, err
	}
	d, err := s.Store.FindDatasetByID(ctx, ev.DatasetID)
	if err != nil {
		return nil, err
	}
	t, err := s.Store.FindTaskByID(ctx, m.TaskID)
	if err != nil {
		return nil, err
	}
	inputs, _, _, err := s.evaluationInputs(ctx, d, ev.Variant)
	if err != nil {
		return nil, err
	}
	ev.Status = dynabench.EvalRunning
	ev.DatasetVersion = d.Version
	ev.Log = appendLog(ev.Log, s.Now(), fmt.Sprintf("attempt %d of %d: %d inputs leased by %s", j.Attempts, j.MaxAttempts, len(inputs), j.LeaseOwner))
	if err := s.Store.UpdateEvaluation(ctx, ev); err != nil {
		return nil, err
	}
	return &Work{JobID: j.ID, Lease: j.LeaseOwner, LeaseUntil: j.LeaseUntil, Attempt: j.Attempts, MaxAttempts: j.MaxAttempts,
		EvaluationID: ev.ID, Task: t.Code, Model: m, Dataset: d.Name, DatasetVersion: d.Version, Variant: ev.Variant, Inputs: inputs}, nil
}

// evaluationInputs lists the inputs of a variant: every original, or every perturbed copy followed
// by the distinct originals they came from. It also returns the examples behind them.
func (s *Service) evaluationInputs(ctx context.Context, d *dynabench.Dataset, variant string) ([]WorkInput, []*dynabench.DatasetExample, []*dynabench.DatasetExample, error) {
	orig, err := s.datasetExamples(ctx, d, dynabench.VariantOriginal)
	if err != nil {
		return nil, nil, nil, err
	}
	if variant == dynabench.VariantOriginal {
		in := make([]WorkInput, len(orig))
		for i, e := range orig {
			in[i] = WorkInput{UID: e.UID, Input: e.Input}
		}
		return in, orig, nil, nil
	}
	pert, err := s.datasetExamples(ctx, d, variant)
	if err != nil {
		return nil, nil, nil, err
	}
	byUID := make(map[string]*dynabench.DatasetExample, len(orig))
	for _, e := range orig {
		byUID[e.UID] = e
	}
	in := make([]WorkInput, 0, 2*len(pert))
	for _, e := range pert {
		in = append(in, WorkInput{UID: e.UID, Input: e.Input})
	}
	var origs []*dynabench.DatasetExample
	seen := map[string]bool{}
	for _, e := range pert {
		o := byUID[e.OriginalUID]
		if o == nil || seen[o.UID] {
			continue
		}
		seen[o.UID] = true
		origs = append(origs, o)
		in = append(in, WorkInput{UID: o.UID, Input: o.Input})
	}
	return in, pert, origs, nil
}

// workJob checks that the actor may report on the job: the in-process workers, admins, or the
// owner of the job's model.
func (s *Service) workJob(ctx context.Context, actor *dynabench.User, jobID int64) (*dynabench.Job, error) {
	if err := requireUser(actor); err != nil {
		return nil, err
	}
	j, err := s.Store.FindJob(ctx, jobID)
	if err != nil {
		return nil, err
	}
	if !actor.Admin && j.UserID != actor.ID {
		return nil, dynabench.Errorf(dynabench.ENOTFOUND, "job not found")
	}
	return j, nil
}

// checkLease refuses a report under a lease that is not the job's current one, before any work is
// done on it; FinishJob checks again in the transaction that stores the result.
func checkLease(j *dynabench.Job, lease string) error {
	if j.State != dynabench.JobRunning || j.LeaseOwner != lease {
		return dynabench.Errorf(dynabench.ECONFLICT, "the job's lease is lost: another worker has it, or it is finished")
	}
	return nil
}

// HeartbeatWork extends the lease; ECONFLICT when it was lost (stop working on the job).
func (s *Service) HeartbeatWork(ctx context.Context, actor *dynabench.User, jobID int64, lease string) (time.Time, error) {
	if _, err := s.workJob(ctx, actor, jobID); err != nil {
		return time.Time{}, err
	}
	until := s.Now().Add(s.JobLease)
	return until, s.Store.HeartbeatJob(ctx, jobID, lease, until)
}

// CompleteWork scores a worker's outputs and stores the result, once: the job is finished under the
// worker's lease in the same transaction, so a result from a worker whose lease was lost is refused
// (ECONFLICT) and never counted twice. A model answer without the scored field fails the evaluation
// as the model's fault; a result for an older dataset version is discarded and the job queued again.
func (s *Service) CompleteWork(ctx context.Context, actor *dynabench.User, jobID int64, lease string, rep WorkReport) (*dynabench.Evaluation, error) {
	j, err := s.workJob(ctx, actor, jobID)
	if err != nil {
		return nil, err
	}
	if err := checkLease(j, lease); err != nil {
		return nil, err
	}
	id, _ := j.Payload["evaluation_id"].(float64)
	ev, err := s.Store.FindEvaluation(ctx, int64(id))
	if err != nil {
		return nil, err
	}
	d, err := s.Store.FindDatasetByID(ctx, ev.DatasetID)
	if err != nil {
		return nil, err
	}
	m, err := s.Store.FindModelByID(ctx, ev.ModelID)
	if err != nil {
		return nil, err
	}
	t, err := s.Store.FindTaskByID(ctx, m.TaskID)
	if err != nil {
		return nil, err
	}
	if rep.DatasetVersion != d.Version {
		err := s.Store.InTx(ctx, func(tx dynabench.Store) error {
			if err := tx.FinishJob(ctx, j.ID, lease, dynabench.JobDone, "superseded by a new dataset version", s.Now()); err != nil {
				return err
			}
			return s.queueEvaluations(ctx, tx, t, m, []*dynabench.Dataset{d})
		})
		if err != nil {
			return nil, err
		}
		s.wakeWorkers()
		return s.Store.FindEvaluation(ctx, ev.ID)
	}
	cfg, err := s.Config(t)
	if err != nil {
		return nil, err
	}
	inputs, examples, origs, err := s.evaluationInputs(ctx, d, ev.Variant)
	if err != nil {
		return nil, err
	}
	if len(rep.Outputs) != len(inputs) {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "outputs", "%d outputs for %d inputs", len(rep.Outputs), len(inputs))
	}
	if math.IsNaN(rep.ExamplesPerSecond) || rep.ExamplesPerSecond < 0 || (rep.MemoryGiB != nil && (math.IsNaN(*rep.MemoryGiB) || *rep.MemoryGiB < 0)) {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "examples_per_second", "measurements are non-negative numbers")
	}
	target, ok := primaryTarget(cfg)
	if !ok {
		return nil, dynabench.Errorf(dynabench.EINVALID, "the task config has no target field to score against")
	}
	preds := make([]string, len(rep.Outputs))
	for i, out := range rep.Outputs {
		p, ok := out[target.Name].(string)
		if !ok {
			_, err := s.FailWork(ctx, actor, jobID, lease, WorkFailure{Fault: dynabench.FaultModel,
				Reason: fmt.Sprintf("%s: the answer to example %q has no %q string", dynabench.ModelInvalidAnswer, inputs[i].UID, target.Name)})
			if err != nil {
				return nil, err
			}
			return s.Store.FindEvaluation(ctx, ev.ID)
		}
		preds[i] = strings.ToValidUTF8(strings.ReplaceAll(p, "\x00", ""), "\uFFFD")
	}
	res := &dynabench.EvalResult{N: len(examples), ExamplesPerSecond: rep.ExamplesPerSecond, MemoryGiB: rep.MemoryGiB, Worker: lease}
	var summary string
	if ev.Variant == dynabench.VariantOriginal {
		res.Predictions = preds
		golds := make([][]string, len(examples))
		tags := make([][]string, len(examples))
		for i, e := range examples {
			golds[i], tags[i] = e.Gold, e.Tags
		}
		res.Metrics, res.ByTag = perfMetrics(cfg, target, golds, preds, tags)
		summary = fmt.Sprintf("completed: %d examples, %s, %.1f examples/s", len(preds), formatMetrics(res.Metrics), rep.ExamplesPerSecond)
	} else {
		res.Predictions = preds[:len(examples)]
		res.OriginalPredictions = preds[len(examples):]
		res.Metrics = map[string]float64{ev.Variant: 100 * consistency(target, examples, origs, res.Predictions, res.OriginalPredictions)}
		summary = fmt.Sprintf("completed: %d perturbed examples, %s %.2f", len(examples), ev.Variant, res.Metrics[ev.Variant])
	}
	ev.Status, ev.Fault, ev.Reason, ev.Result = dynabench.EvalCompleted, "", "", res
	ev.Log = appendLog(ev.Log, s.Now(), rep.Log)
	ev.Log = appendLog(ev.Log, s.Now(), summary)
	err = s.Store.InTx(ctx, func(tx dynabench.Store) error {
		if err := tx.FinishJob(ctx, j.ID, lease, dynabench.JobDone, "", s.Now()); err != nil {
			return err
		}
		return tx.UpdateEvaluation(ctx, ev)
	})
	if err != nil {
		return nil, err
	}
	return ev, nil
}

// FailWork records a failed attempt: the job is retried with backoff while attempts remain and
// retrying may help; otherwise it is parked and the evaluation fails with the reason and fault.
func (s *Service) FailWork(ctx context.Context, actor *dynabench.User, jobID int64, lease string, f WorkFailure) (*dynabench.Evaluation, error) {
	j, err := s.workJob(ctx, actor, jobID)
	if err != nil {
		return nil, err
	}
	if err := checkLease(j, lease); err != nil {
		return nil, err
	}
	if f.Fault != dynabench.FaultModel && f.Fault != dynabench.FaultPlatform {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "fault", "one of model, platform")
	}
	reason := truncate(strings.ToValidUTF8(f.Reason, "\uFFFD"), 1000)
	if reason == "" {
		reason = "the worker gave no reason"
	}
	id, _ := j.Payload["evaluation_id"].(float64)
	ev, err := s.Store.FindEvaluation(ctx, int64(id))
	if err != nil {
		return nil, err
	}
	now := s.Now()
	err = s.Store.InTx(ctx, func(tx dynabench.Store) error {
		if f.Retry && j.Attempts < j.MaxAttempts {
			wait := backoff(s.RetryBackoff, j.Attempts)
			if err := tx.FinishJob(ctx, j.ID, lease, dynabench.JobQueued, reason, now.Add(wait)); err != nil {
				return err
			}
			ev.Status, ev.Reason, ev.Fault = dynabench.EvalQueued, "", ""
			ev.Log = appendLog(ev.Log, now, fmt.Sprintf("attempt %d failed (%s fault): %s; retrying in %s", j.Attempts, f.Fault, reason, wait))
		} else {
			if err := tx.FinishJob(ctx, j.ID, lease, dynabench.JobParked, reason, now); err != nil {
				return err
			}
			ev.Status, ev.Reason, ev.Fault = dynabench.EvalFailed, reason, f.Fault
			ev.Log = appendLog(ev.Log, now, fmt.Sprintf("failed on attempt %d of %d (%s fault): %s", j.Attempts, j.MaxAttempts, f.Fault, reason))
		}
		ev.Result = nil
		return tx.UpdateEvaluation(ctx, ev)
	})
	if err != nil {
		return nil, err
	}
	return ev, nil
}

// backoff is the wait before attempt n+1: base, 4×base, 16×base, ... up to 10 minutes.
func backoff(base time.Duration, attempt int) time.Duration {
	d := base
	for range max(attempt-1, 0) {
		d *= 4
		if d > 10*time.Minute {
			return 10 * time.Minute
		}
	}
	return d
}

func appendLog(log string, at time.Time, line string) string {
	if line = strings.TrimSpace(line); line == "" {
		return log
	}
	log += at.UTC().Format(time.RFC3339) + " " + truncate(line, 2000) + "\n"
	if len(log) > maxLog {
		log = "…" + log[len(log)-maxLog:]
		log = strings.ToValidUTF8(log, "")
	}
	return log
}

// Perf metric names.
const (
	MetricAccuracy = "accuracy"
	MetricMacroF1  = "macro_f1"
	MetricSquadEM  = "squad_em"
	MetricSquadF1  = "squad_f1"
)

// perfMetrics computes, in percent, every perf metric that applies to the target (accuracy and
// macro-F1 for labels; SQuAD EM and F1 for answers), overall and per tag.
func perfMetrics(cfg *taskconfig.Config, target taskconfig.Field, golds [][]string, preds []string, tags [][]string) (map[string]float64, map[string]map[string]float64) {
	compute := func(idx []int) map[string]float64 {
		g, p := make([][]string, len(idx)), make([]string, len(idx))
		for i, k := range idx {
			g[i], p[i] = golds[k], preds[k]
		}
		out := map[string]float64{}
		if target.Type == taskconfig.TypeMulticlass {
			first := make([]string, len(g))
			for i := range g {
				first[i] = g[i][0]
			}
			if v, err := evaluation.Accuracy(first, p); err == nil {
				out[MetricAccuracy] = 100 * v
			}
			if v, err := evaluation.MacroF1(first, p, target.Labels); err == nil {
				out[MetricMacroF1] = 100 * v
			}
			return out
		}
		if v, err := evaluation.SquadEM(g, p); err == nil {
			out[MetricSquadEM] = 100 * v
		}
		if v, err := evaluation.SquadF1(g, p); err == nil {
			out[MetricSquadF1] = 100 * v
		}
		return out
	}
	all := make([]int, len(preds))
	for i := range all {
		all[i] = i
	}
	overall := compute(all)
	byTag := map[string]map[string]float64{}
	for tag, idx := range evaluation.GroupByTag(tags) {
		byTag[tag] = compute(idx)
	}
	if len(byTag) == 0 {
		byTag = nil
	}
	return overall, byTag
}

// consistency is Dynabench's delta score (get_unperturbed_percent): how often the model's prediction
// on a perturbed copy agrees with its own prediction on the original, under the perf metric (exact
// agreement for labels, SQuAD F1 against the original prediction for answers), averaged per
// original and then over originals.
func consistency(target taskconfig.Field, pert, origs []*dynabench.DatasetExample, pertPreds, origPreds []string) float64 {
	origPred := make(map[string]string, len(origs))
	for i, o := range origs {
		origPred[o.UID] = origPreds[i]
	}
	var ou, op, pp []string
	for i, e := range pert {
		if p, ok := origPred[e.OriginalUID]; ok {
			ou, op, pp = append(ou, e.OriginalUID), append(op, p), append(pp, pertPreds[i])
		}
	}
	score := perturb.QAAgreement
	if target.Type == taskconfig.TypeMulticlass {
		score = perturb.AgreeScore(perturb.ExactAgree)
	}
	v := perturb.GroupedConsistency(ou, op, pp, score)
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func formatMetrics(m map[string]float64) string {
	var parts []string
	for _, k := range []string{MetricAccuracy, MetricMacroF1, MetricSquadEM, MetricSquadF1} {
		if v, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, v))
		}
	}
	return strings.Join(parts, ", ")
}
