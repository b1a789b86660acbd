// Package worker runs evaluation jobs: it leases a job, calls the model on every input in batches
// while keeping the lease alive, measures throughput, and reports the outputs (or why it could not).
// The same loop runs in the server (over the service) and in `dynabench worker` on other machines
// (over the authenticated API).
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/service"
)

// Source hands out work and takes reports: the service itself, or the API of a remote server.
type Source interface {
	// Lease returns the next due job, or an ENOTFOUND error when none is due.
	Lease(ctx context.Context) (*service.Work, error)
	// Heartbeat extends the lease; an ECONFLICT error means it was lost.
	Heartbeat(ctx context.Context, w *service.Work) error
	Complete(ctx context.Context, w *service.Work, r service.WorkReport) error
	Fail(ctx context.Context, w *service.Work, f service.WorkFailure) error
}

// Predictors builds the predictor of a job's model.
type Predictors func(ctx context.Context, w *service.Work) (dynabench.Predictor, error)

// MemoryReporter is implemented by models that know how much memory they hold (the built-in ones);
// a negative count means not measured.
type MemoryReporter interface {
	MemoryBytes() int64
}

// Progress is told how far a job is: done of total inputs.
type Progress func(w *service.Work, done, total int)

// Worker runs jobs from a Source.
type Worker struct {
	Source     Source
	Predictors Predictors
	Log        *slog.Logger
	// BatchSize is how many inputs go to one PredictBatch call (default 512): HTTP adapters split
	// them into the model's own batch size and send those concurrently, within its concurrency limit.
	BatchSize int
	// Poll is the longest wait between leases when nothing is due; default 2 s.
	Poll time.Duration
	// Wake, when set, ends a wait early (the server signals it when jobs are queued).
	Wake <-chan struct{}
	// Heartbeat is how often the lease is extended; default a third of the lease the job came with.
	Heartbeat time.Duration
	Progress  Progress
}

// Run works until ctx ends.
func (w *Worker) Run(ctx context.Context) {
	poll := w.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	for ctx.Err() == nil {
		did, err := w.RunOnce(ctx)
		if did {
			continue
		}
		if err != nil && ctx.Err() == nil {
			w.log().Warn("worker: lease failed", "err", err)
		}
		wait := poll/2 + rand.N(poll/2+1) // jitter, so many workers do not poll in step
		select {
		case <-ctx.Done():
		case <-w.Wake:
		case <-time.After(wait):
		}
	}
}

// RunOnce leases and runs one job; it reports whether there was one.
func (w *Worker) RunOnce(ctx context.Context) (bool, error) {
	work, err := w.Source.Lease(ctx)
	if dynabench.IsCode(err, dynabench.ENOTFOUND) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	w.run(ctx, work)
	return true, nil
}

func (w *Worker) log() *slog.Logger {
	if w.Log == nil {
		return slog.Default()
	}
	return w.Log
}

// run calls the model on every input under a lease kept alive by heartbeats. If the lease is lost
// the work stops and nothing is reported: whoever holds the job now will report it.
func (w *Worker) run(ctx context.Context, work *service.Work) {
	log := w.log().With("job", work.JobID, "evaluation", work.EvaluationID, "dataset", work.Dataset, "variant", work.Variant)
	jobCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	every := w.Heartbeat
	if every <= 0 {
		// A third of the lease the server gave, so two heartbeats may be lost before it expires.
		every = max(time.Until(work.LeaseUntil)/3, 100*time.Millisecond)
	}
	var hb sync.WaitGroup
	hb.Add(1)
	go func() {
		defer hb.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-jobCtx.Done():
				return
			case <-t.C:
				if err := w.Source.Heartbeat(jobCtx, work); dynabench.IsCode(err, dynabench.ECONFLICT) {
					cancel(errLeaseLost)
					return
				} else if err != nil && jobCtx.Err() == nil {
					log.Warn("worker: heartbeat failed", "err", err)
				}
			}
		}
	}()
	report, failure := w.predict(jobCtx, work)
	lost := errors.Is(context.Cause(jobCtx), errLeaseLost)
	cancel(nil)
	hb.Wait()
	if lost {
		log.Warn("worker: lease lost; another worker has the job")
		return
	}
	if ctx.Err() != nil {
		// Shutting down: say so, so the job is retried at once rather than after the lease expires.
		failure = &service.WorkFailure{Fault: dynabench.FaultPlatform, Retry: true, Reason: "the worker shut down mid-job"}
	}
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer rcancel()
	var err error
	if failure != nil {
		err = w.Source.Fail(rctx, work, *failure)
		log.Info("worker: job failed", "fault", failure.Fault, "retry", failure.Retry, "reason", failure.Reason)
	} else {
		err = w.Source.Complete(rctx, work, *report)
		log.Info("worker: job done", "inputs", len(work.Inputs), "examples_per_second", report.ExamplesPerSecond)
	}
	if err != nil {
		log.Warn("worker: report refused", "err", err)
	}
}

var errLeaseLost = errors.New("lease lost")

// predict runs the inputs through the model in batches and measures throughput as inputs per
// second of time spent waiting for the model.
func (w *Worker) predict(ctx context.Context, work *service.Work) (*service.WorkReport, *service.WorkFailure) {
	p, err := w.Predictors(ctx, work)
	if err != nil {
		return nil, classify(err, "could not load the model")
	}
	size := w.BatchSize
	if size <= 0 {
		size = 512
	}
	outputs := make([]map[string]any, 0, len(work.Inputs))
	var spent time.Duration
	for start := 0; start < len(work.Inputs); start += size {
		batch := work.Inputs[start:min(start+size, len(work.Inputs))]
		ins := make([]map[string]any, len(batch))
		for i, in := range batch {
			ins[i] = in.Input
		}
		t0 := time.Now()
		outs, err := p.PredictBatch(ctx, ins)
		spent += time.Since(t0)
		if err != nil {
			return nil, classify(err, fmt.Sprintf("inputs %d–%d", start+1, start+len(batch)))
		}
		if len(outs) != len(ins) {
			return nil, &service.WorkFailure{Fault: dynabench.FaultModel, Reason: fmt.Sprintf("%s: %d answers for a batch of %d",
				dynabench.ModelInvalidAnswer, len(outs), len(ins))}
		}
		outputs = append(outputs, outs...)
		if w.Progress != nil {
			w.Progress(work, len(outputs), len(work.Inputs))
		}
	}
	rep := &service.WorkReport{DatasetVersion: work.DatasetVersion, Outputs: outputs}
	if spent > 0 {
		rep.ExamplesPerSecond = float64(len(outputs)) / spent.Seconds()
	}
	if mr, ok := p.(MemoryReporter); ok && mr.MemoryBytes() >= 0 {
		gib := float64(mr.MemoryBytes()) / (1 << 30)
		rep.MemoryGiB = &gib
	}
	rep.Log = fmt.Sprintf("%d inputs in %s of model time (batches of %d)", len(outputs), spent.Round(time.Millisecond), size)
	return rep, nil
}

// classify turns a model call's error into a failure: a malformed answer is the model's fault and
// final; a timeout, refusal or bad status is the model's fault and may pass; anything else is ours.
func classify(err error, where string) *service.WorkFailure {
	if me := dynabench.AsModelError(err); me != nil {
		return &service.WorkFailure{Fault: dynabench.FaultModel, Retry: me.Kind != dynabench.ModelInvalidAnswer,
			Reason: fmt.Sprintf("%s (%s)", err.Error(), where)}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &service.WorkFailure{Fault: dynabench.FaultModel, Retry: true, Reason: fmt.Sprintf("%s: %v (%s)", dynabench.ModelTimeout, err, where)}
	}
	return &service.WorkFailure{Fault: dynabench.FaultPlatform, Retry: true, Reason: fmt.Sprintf("%v (%s)", err, where)}
}

// Local is the Source of the server's own workers: the service, acting as the platform.
type Local struct {
	Service *service.Service
	Name    string
}

func (l *Local) Lease(ctx context.Context) (*service.Work, error) {
	return l.Service.LeaseWork(ctx, service.System, l.Name, []string{service.JobEvaluate, service.JobEvaluateBuiltin})
}

func (l *Local) Heartbeat(ctx context.Context, w *service.Work) error {
	_, err := l.Service.HeartbeatWork(ctx, service.System, w.JobID, w.Lease)
	return err
}

func (l *Local) Complete(ctx context.Context, w *service.Work, r service.WorkReport) error {
	_, err := l.Service.CompleteWork(ctx, service.System, w.JobID, w.Lease, r)
	return err
}

func (l *Local) Fail(ctx context.Context, w *service.Work, f service.WorkFailure) error {
	_, err := l.Service.FailWork(ctx, service.System, w.JobID, w.Lease, f)
	return err
}

// LocalPredictors builds predictors with the server's model resolver.
func LocalPredictors(models dynabench.ModelResolver) Predictors {
	return func(ctx context.Context, w *service.Work) (dynabench.Predictor, error) {
		return models.Predictor(ctx, w.Model)
	}
}
