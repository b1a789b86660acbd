package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dynabench-go/dynabench"
)

const jobCols = `id, kind, idempotency_key, payload, state, attempts, max_attempts, run_after, lease_owner, lease_until,
	last_error, result, user_id, task_id, created_at, updated_at`

func scanJob(row interface{ Scan(...any) error }) (*dynabench.Job, error) {
	var j dynabench.Job
	var payload, result []byte
	var runAfter, leaseUntil, created, updated int64
	if err := row.Scan(&j.ID, &j.Kind, &j.IdempotencyKey, &payload, &j.State, &j.Attempts, &j.MaxAttempts, &runAfter,
		&j.LeaseOwner, &leaseUntil, &j.LastError, &result, &j.UserID, &j.TaskID, &created, &updated); err != nil {
		return nil, err
	}
	var err error
	if j.Payload, err = decodeMap(payload); err != nil {
		return nil, err
	}
	j.Result = result
	j.RunAfter, j.LeaseUntil = fromMillis(runAfter), fromMillis(leaseUntil)
	j.CreatedAt, j.UpdatedAt = fromMillis(created), fromMillis(updated)
	return &j, nil
}

// EnqueueJob adds a job, once per idempotency key: while a job with that key is queued or running,
// enqueueing it again changes nothing; a done or parked job is reset and queued again (its attempts
// start over). j is filled from the stored row.
func (s *Store) EnqueueJob(ctx context.Context, j *dynabench.Job) error {
	payload, err := encodeJSON(j.Payload)
	if err != nil {
		return err
	}
	if j.MaxAttempts <= 0 {
		j.MaxAttempts = 5
	}
	now := s.now()
	runAfter := now
	if !j.RunAfter.IsZero() {
		runAfter = j.RunAfter.UnixMilli()
	}
	got, err := scanJob(s.w().QueryRowContext(ctx,
		`INSERT INTO jobs (kind, idempotency_key, payload, state, attempts, max_attempts, run_after, user_id, task_id, created_at, updated_at)
		 VALUES ($1, $2, $3, 'queued', 0, $4, $5, $6, $7, $8, $8)
		 ON CONFLICT (idempotency_key) DO UPDATE SET payload = excluded.payload, state = 'queued', attempts = 0,
		   max_attempts = excluded.max_attempts, user_id = excluded.user_id, result = '{}', run_after = excluded.run_after, lease_owner = '', lease_until = 0,
		   last_error = '', updated_at = excluded.updated_at
		 WHERE jobs.state IN ('done', 'parked')
		 RETURNING `+jobCols,
		j.Kind, j.IdempotencyKey, payload, j.MaxAttempts, runAfter, j.UserID, j.TaskID, now))
	if errors.Is(err, sql.ErrNoRows) { // already queued or running
		got, err = scanJob(s.w().QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE idempotency_key = $1`, j.IdempotencyKey))
	}
	if err != nil {
		return mapErr("enqueue job", err)
	}
	*j = *got
	return nil
}

// LeaseJob hands the next due job of the query's kinds to a worker: a queued job whose time has
// come, or a running job whose lease expired (its worker died). The lease lasts q.Lease; the job's
// LeaseOwner names this lease ("worker#attempt"), and only that owner may heartbeat or finish it.
// A job whose lease expired on its last attempt is parked instead. ENOTFOUND when nothing is due.
func (s *Store) LeaseJob(ctx context.Context, q dynabench.JobQuery) (*dynabench.Job, error) {
	if len(q.Kinds) == 0 || q.Worker == "" || q.Lease <= 0 {
		return nil, dynabench.Errorf(dynabench.EINVALID, "a lease needs kinds, a worker name and a duration")
	}
	var got *dynabench.Job
	err := s.InTx(ctx, func(tx dynabench.Store) error {
		t := tx.(*Store)
		for range 20 {
			now := t.now()
			args := []any{now}
			marks := make([]string, len(q.Kinds))
			for i, k := range q.Kinds {
				args = append(args, k)
				marks[i] = fmt.Sprintf("$%d", len(args))
			}
			sel := `SELECT id, state, attempts, max_attempts FROM jobs
				WHERE ((state = 'queued' AND run_after <= $1) OR (state = 'running' AND lease_until < $1))
				AND kind IN (` + strings.Join(marks, ", ") + `)`
			if q.UserID != 0 {
				args = append(args, q.UserID)
				sel += fmt.Sprintf(" AND user_id = $%d", len(args))
			}
			sel += ` ORDER BY run_after, id LIMIT 1`
			if t.db.Engine == Postgres {
				sel += ` FOR UPDATE SKIP LOCKED`
			}
			var id int64
			var state string
			var attempts, maxAttempts int
			err := t.w().QueryRowContext(ctx, sel, args...).Scan(&id, &state, &attempts, &maxAttempts)
			if errors.Is(err, sql.ErrNoRows) {
				return nil // commit the jobs parked on the way
			}
			if err != nil {
				return mapErr("lease job", err)
			}
			if state == dynabench.JobRunning && attempts >= maxAttempts {
				msg := fmt.Sprintf("parked: the worker's lease expired on attempt %d of %d (the worker stopped)", attempts, maxAttempts)
				if _, err := t.w().ExecContext(ctx,
					`UPDATE jobs SET state = 'parked', last_error = $2, lease_owner = '', lease_until = 0, updated_at = $3 WHERE id = $1`,
					id, msg, now); err != nil {
					return mapErr("park job", err)
				}
				continue
			}
			owner := fmt.Sprintf("%s#%d", q.Worker, attempts+1)
			got, err = scanJob(t.w().QueryRowContext(ctx,
				`UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_owner = $2, lease_until = $3, updated_at = $4
				 WHERE id = $1 RETURNING `+jobCols, id, owner, now+q.Lease.Milliseconds(), now))
			return mapErr("lease job", err)
		}
		return nil
	})
	if err == nil && got == nil {
		err = dynabench.Errorf(dynabench.ENOTFOUND, "no job is due")
	}
	return got, err
}

// HeartbeatJob extends a lease until the given time; ECONFLICT when the lease is no longer the
// owner's (it expired and another worker took the job, or the job finished).
func (s *Store) HeartbeatJob(ctx context.Context, id int64, owner string, until time.Time) error {
	res, err := s.w().ExecContext(ctx,
		`UPDATE jobs SET lease_until = $3, updated_at = $4 WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
		id, owner, until.UnixMilli(), s.now())
	if err != nil {
		return mapErr("heartbeat job", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return dynabench.Errorf(dynabench.ECONFLICT, "the job's lease is lost")
	}
	return nil
}

// FinishJob ends the owner's lease: state JobDone, JobParked (with the reason), or JobQueued to
// retry at runAfter (with the error that made it fail). ECONFLICT when the lease is lost, so a
// worker that was presumed dead cannot finish a job twice.
func (s *Store) FinishJob(ctx context.Context, id int64, owner, state, lastError string, runAfter time.Time) error {
	switch state {
	case dynabench.JobDone, dynabench.JobParked, dynabench.JobQueued:
	default:
		return fmt.Errorf("sqlstore: finish job: bad state %q", state)
	}
	res, err := s.w().ExecContext(ctx,
		`UPDATE jobs SET state = $3, last_error = $4, run_after = $5, lease_owner = '', lease_until = 0, updated_at = $6
		 WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
		id, owner, state, lastError, runAfter.UnixMilli(), s.now())
	if err != nil {
		return mapErr("finish job", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return dynabench.Errorf(dynabench.ECONFLICT, "the job's lease is lost")
	}
	return nil
}

// FindJob returns a job or ENOTFOUND.
func (s *Store) FindJob(ctx context.Context, id int64) (*dynabench.Job, error) {
	j, err := scanJob(s.r().QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = $1`, id))
	return j, mapErr("job", err)
}

// FindJobByKey returns the job with that idempotency key or ENOTFOUND.
func (s *Store) FindJobByKey(ctx context.Context, key string) (*dynabench.Job, error) {
	j, err := scanJob(s.r().QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE idempotency_key = $1`, key))
	return j, mapErr("job", err)
}

// SetJobProgress writes the JSON of progress as the job's result, under the owner's lease;
// ECONFLICT when the lease is lost.
func (s *Store) SetJobProgress(ctx context.Context, id int64, owner string, progress any) error {
	b, err := json.Marshal(progress)
	if err != nil {
		return err
	}
	res, err := s.w().ExecContext(ctx, `UPDATE jobs SET result = $3, updated_at = $4 WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
		id, owner, string(b), s.now())
	if err != nil {
		return mapErr("job progress", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return dynabench.Errorf(dynabench.ECONFLICT, "the job's lease is lost")
	}
	return nil
}
