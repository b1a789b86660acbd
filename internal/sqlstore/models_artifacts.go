package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/dynabench-go/dynabench"
)

// FindExamples lists a page of the task's examples matching the filter, in id order.
func (s *Store) FindExamples(ctx context.Context, f dynabench.ExampleFilter) ([]*dynabench.Example, error) {
	switch {
	case f.Limit == 0:
		f.Limit = dynabench.MaxExamplesPage
	case f.Limit < 0 || f.Limit > dynabench.MaxExamplesPage:
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "limit", "must be 1 to %d", dynabench.MaxExamplesPage)
	}
	if len(f.RoundIDs) > dynabench.MaxExampleFilterRounds {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "rounds", "at most %d rounds", dynabench.MaxExampleFilterRounds)
	}
	where := []string{"e.task_id = $1", "e.id > $2"}
	args := []any{f.TaskID, f.AfterID}
	if f.Status != "" {
		args = append(args, f.Status)
		where = append(where, fmt.Sprintf("e.status = $%d", len(args)))
	}
	if len(f.RoundIDs) > 0 {
		marks := make([]string, len(f.RoundIDs))
		for i, id := range f.RoundIDs {
			args = append(args, id)
			marks[i] = fmt.Sprintf("$%d", len(args))
		}
		where = append(where, "e.round_id IN ("+strings.Join(marks, ", ")+")")
	}
	args = append(args, f.Limit)
	rows, err := s.r().QueryContext(ctx, `SELECT `+exampleCols+` FROM examples e WHERE `+strings.Join(where, " AND ")+
		fmt.Sprintf(` ORDER BY e.id LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, mapErr("examples", err)
	}
	defer rows.Close()
	var out []*dynabench.Example
	for rows.Next() {
		e, err := scanExample(rows)
		if err != nil {
			return nil, mapErr("examples", err)
		}
		out = append(out, e)
	}
	return out, mapErr("examples", rows.Err())
}

// CreateModelArtifact records a model's artifact; the model must exist and have none yet.
func (s *Store) CreateModelArtifact(ctx context.Context, a *dynabench.ModelArtifact) error {
	manifest, err := encodeJSON(a.Manifest)
	if err != nil {
		return err
	}
	now := s.now()
	_, err = s.w().ExecContext(ctx,
		`INSERT INTO model_artifacts (model_id, blob_key, size, sha256, manifest, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		a.ModelID, a.BlobKey, a.Size, a.SHA256, manifest, now)
	if err != nil {
		return mapErr("create model artifact", err)
	}
	a.CreatedAt = fromMillis(now)
	return nil
}

// FindModelArtifact returns the model's artifact record or ENOTFOUND.
func (s *Store) FindModelArtifact(ctx context.Context, modelID int64) (*dynabench.ModelArtifact, error) {
	var a dynabench.ModelArtifact
	var manifest []byte
	var created int64
	err := s.r().QueryRowContext(ctx,
		`SELECT model_id, blob_key, size, sha256, manifest, created_at FROM model_artifacts WHERE model_id = $1`, modelID).
		Scan(&a.ModelID, &a.BlobKey, &a.Size, &a.SHA256, &manifest, &created)
	if err != nil {
		return nil, mapErr("model artifact", err)
	}
	if a.Manifest, err = decodeMap(manifest); err != nil {
		return nil, err
	}
	a.CreatedAt = fromMillis(created)
	return &a, nil
}
