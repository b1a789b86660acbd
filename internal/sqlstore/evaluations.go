package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dynabench-go/dynabench"
)

const evaluationCols = `id, model_id, dataset_id, variant, dataset_version, status, fault, reason, result, log, created_at, updated_at`

func scanEvaluation(row interface{ Scan(...any) error }) (*dynabench.Evaluation, error) {
	var e dynabench.Evaluation
	var result []byte
	var created, updated int64
	if err := row.Scan(&e.ID, &e.ModelID, &e.DatasetID, &e.Variant, &e.DatasetVersion, &e.Status, &e.Fault, &e.Reason,
		&result, &e.Log, &created, &updated); err != nil {
		return nil, err
	}
	if e.Status == dynabench.EvalCompleted && len(result) > 0 {
		e.Result = &dynabench.EvalResult{}
		if err := json.Unmarshal(result, e.Result); err != nil {
			return nil, fmt.Errorf("sqlstore: evaluation result: %w", err)
		}
	}
	e.CreatedAt, e.UpdatedAt = fromMillis(created), fromMillis(updated)
	return &e, nil
}

// QueueEvaluation creates the evaluation of a model on a dataset variant, or puts an existing one
// back in the queue for that dataset version (clearing its result, reason and log). e is filled
// from the stored row.
func (s *Store) QueueEvaluation(ctx context.Context, e *dynabench.Evaluation) error {
	now := s.now()
	row := s.w().QueryRowContext(ctx,
		`INSERT INTO evaluations (model_id, dataset_id, variant, dataset_version, status, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $6)
		 ON CONFLICT (model_id, dataset_id, variant) DO UPDATE SET dataset_version = excluded.dataset_version,
		   status = excluded.status, fault = '', reason = '', result = '{}', log = '', updated_at = excluded.updated_at
		 RETURNING `+evaluationCols,
		e.ModelID, e.DatasetID, e.Variant, e.DatasetVersion, dynabench.EvalQueued, now)
	got, err := scanEvaluation(row)
	if err != nil {
		return mapErr("queue evaluation", err)
	}
	*e = *got
	return nil
}

// UpdateEvaluation writes an evaluation's status, fault, reason, result and log.
func (s *Store) UpdateEvaluation(ctx context.Context, e *dynabench.Evaluation) error {
	result := []byte("{}")
	if e.Result != nil {
		var err error
		if result, err = json.Marshal(e.Result); err != nil {
			return fmt.Errorf("sqlstore: encode evaluation result: %w", err)
		}
	}
	now := s.now()
	res, err := s.w().ExecContext(ctx,
		`UPDATE evaluations SET status = $2, fault = $3, reason = $4, result = $5, log = $6, updated_at = $7 WHERE id = $1`,
		e.ID, e.Status, e.Fault, e.Reason, string(result), e.Log, now)
	if err != nil {
		return mapErr("update evaluation", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return dynabench.Errorf(dynabench.ENOTFOUND, "evaluation not found")
	}
	e.UpdatedAt = fromMillis(now)
	return nil
}

// FindEvaluation returns one evaluation or ENOTFOUND.
func (s *Store) FindEvaluation(ctx context.Context, id int64) (*dynabench.Evaluation, error) {
	e, err := scanEvaluation(s.r().QueryRowContext(ctx, `SELECT `+evaluationCols+` FROM evaluations WHERE id = $1`, id))
	return e, mapErr("evaluation", err)
}

// FindEvaluations lists a model's evaluations (modelID > 0), a dataset's (datasetID > 0), or every
// evaluation of the task's models (taskID > 0), in id order.
func (s *Store) FindEvaluations(ctx context.Context, f dynabench.EvaluationFilter) ([]*dynabench.Evaluation, error) {
	q := `SELECT ` + evaluationCols + ` FROM evaluations WHERE `
	var arg int64
	switch {
	case f.ModelID > 0:
		q, arg = q+`model_id = $1`, f.ModelID
	case f.DatasetID > 0:
		q, arg = q+`dataset_id = $1`, f.DatasetID
	case f.TaskID > 0:
		q, arg = q+`model_id IN (SELECT id FROM models WHERE task_id = $1)`, f.TaskID
	default:
		return nil, dynabench.Errorf(dynabench.EINVALID, "an evaluation filter needs a model, a dataset or a task")
	}
	rows, err := s.r().QueryContext(ctx, q+` ORDER BY id`, arg)
	if err != nil {
		return nil, mapErr("evaluations", err)
	}
	defer rows.Close()
	var out []*dynabench.Evaluation
	for rows.Next() {
		e, err := scanEvaluation(rows)
		if err != nil {
			return nil, mapErr("evaluations", err)
		}
		out = append(out, e)
	}
	return out, mapErr("evaluations", rows.Err())
}

// ScoresVersion changes whenever an evaluation of the task's models changes or a dataset of the
// task changes: a cheap key for caching leaderboards, shared by every replica.
func (s *Store) ScoresVersion(ctx context.Context, taskID int64) (string, error) {
	// Only completed evaluations reach a leaderboard: their count and the sum of their update times
	// move whenever one completes, is re-queued or is re-scored.
	var n1, m1, n2, m2, n3, m3 int64
	err := s.r().QueryRowContext(ctx,
		`SELECT (SELECT count(*) FROM evaluations e JOIN models m ON m.id = e.model_id WHERE m.task_id = $1 AND e.status = 'completed'),
		        (SELECT COALESCE(sum(e.updated_at), 0) FROM evaluations e JOIN models m ON m.id = e.model_id WHERE m.task_id = $1 AND e.status = 'completed'),
		        (SELECT count(*) FROM datasets WHERE task_id = $1),
		        (SELECT COALESCE(sum(version + updated_at), 0) FROM datasets WHERE task_id = $1),
		        (SELECT count(*) FROM models WHERE task_id = $1 AND published),
		        (SELECT COALESCE(sum(id), 0) FROM models WHERE task_id = $1 AND published)`, taskID).Scan(&n1, &m1, &n2, &m2, &n3, &m3)
	if err != nil {
		return "", mapErr("scores version", err)
	}
	return fmt.Sprintf("%d.%d.%d.%d.%d.%d", n1, m1, n2, m2, n3, m3), nil
}

// SetModelPublished publishes or unpublishes a model.
func (s *Store) SetModelPublished(ctx context.Context, modelID int64, published bool) error {
	res, err := s.w().ExecContext(ctx, `UPDATE models SET published = $2 WHERE id = $1`, modelID, published)
	if err != nil {
		return mapErr("publish model", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return dynabench.Errorf(dynabench.ENOTFOUND, "model not found")
	}
	return nil
}
