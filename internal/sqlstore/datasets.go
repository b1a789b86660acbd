package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dynabench-go/dynabench"
)

const datasetCols = `id, task_id, name, access, version, round_number, sha256, size, variants, created_by, created_at, updated_at`

func scanDataset(row interface{ Scan(...any) error }) (*dynabench.Dataset, error) {
	var d dynabench.Dataset
	var variants []byte
	var createdBy *int64
	var created, updated int64
	if err := row.Scan(&d.ID, &d.TaskID, &d.Name, &d.Access, &d.Version, &d.RoundNumber, &d.SHA256, &d.Size,
		&variants, &createdBy, &created, &updated); err != nil {
		return nil, err
	}
	d.Variants = map[string]int{}
	if len(variants) > 0 {
		if err := json.Unmarshal(variants, &d.Variants); err != nil {
			return nil, fmt.Errorf("sqlstore: dataset variants: %w", err)
		}
	}
	if createdBy != nil {
		d.CreatedBy = *createdBy
	}
	d.CreatedAt, d.UpdatedAt = fromMillis(created), fromMillis(updated)
	return &d, nil
}

// SaveDataset creates the dataset, or replaces the task's dataset of that name (case-insensitive):
// its examples, access, hash and size change and its version goes up by one. d.ID, d.Version and
// the times are set. Call it inside InTx so the swap is atomic.
func (s *Store) SaveDataset(ctx context.Context, d *dynabench.Dataset, examples []*dynabench.DatasetExample) error {
	variants, err := json.Marshal(d.Variants)
	if err != nil {
		return err
	}
	if d.Variants == nil {
		variants = []byte("{}")
	}
	var createdBy any
	if d.CreatedBy != 0 {
		createdBy = d.CreatedBy
	}
	now := s.now()
	old, err := s.FindDatasetByName(ctx, d.TaskID, d.Name)
	switch {
	case dynabench.IsCode(err, dynabench.ENOTFOUND):
		err = s.w().QueryRowContext(ctx,
			`INSERT INTO datasets (task_id, name, access, version, round_number, sha256, size, variants, created_by, created_at, updated_at)
			 VALUES ($1, $2, $3, 1, $4, $5, $6, $7, $8, $9, $9) RETURNING id`,
			d.TaskID, d.Name, d.Access, d.RoundNumber, d.SHA256, d.Size, string(variants), createdBy, now).Scan(&d.ID)
		if err != nil {
			return mapErr("create dataset", err)
		}
		d.Version, d.CreatedAt = 1, fromMillis(now)
	case err != nil:
		return err
	default:
		d.ID, d.Name, d.Version, d.CreatedAt = old.ID, old.Name, old.Version+1, old.CreatedAt
		if _, err := s.w().ExecContext(ctx,
			`UPDATE datasets SET access = $2, version = $3, round_number = $4, sha256 = $5, size = $6, variants = $7,
			 updated_at = $8 WHERE id = $1`,
			d.ID, d.Access, d.Version, d.RoundNumber, d.SHA256, d.Size, string(variants), now); err != nil {
			return mapErr("update dataset", err)
		}
		if _, err := s.w().ExecContext(ctx, `DELETE FROM dataset_examples WHERE dataset_id = $1`, d.ID); err != nil {
			return mapErr("replace dataset examples", err)
		}
	}
	d.UpdatedAt = fromMillis(now)
	return s.insertDatasetExamples(ctx, d.ID, examples)
}

// insertDatasetExamples writes examples in multi-row INSERTs (9 parameters a row, well under both
// engines' parameter limits).
func (s *Store) insertDatasetExamples(ctx context.Context, datasetID int64, examples []*dynabench.DatasetExample) error {
	const perStmt = 200
	for start := 0; start < len(examples); start += perStmt {
		batch := examples[start:min(start+perStmt, len(examples))]
		var q strings.Builder
		q.WriteString(`INSERT INTO dataset_examples (dataset_id, variant, idx, uid, original_uid, perturbation, input, gold, tags) VALUES `)
		args := make([]any, 0, len(batch)*9)
		for i, e := range batch {
			input, err := encodeJSON(e.Input)
			if err != nil {
				return err
			}
			gold, err := json.Marshal(nonNil(e.Gold))
			if err != nil {
				return err
			}
			tags, err := json.Marshal(nonNil(e.Tags))
			if err != nil {
				return err
			}
			if i > 0 {
				q.WriteString(", ")
			}
			// SQLite looks "$n" up by name, which is quadratic in a statement of 1,800 parameters;
			// "?n" is a plain index there.
			mark := "$"
			if s.db.Engine == SQLite {
				mark = "?"
			}
			n := len(args)
			q.WriteString("(")
			for k := 1; k <= 9; k++ {
				if k > 1 {
					q.WriteString(", ")
				}
				fmt.Fprintf(&q, "%s%d", mark, n+k)
			}
			q.WriteString(")")
			e.DatasetID = datasetID
			args = append(args, datasetID, e.Variant, e.Idx, e.UID, e.OriginalUID, e.Perturbation, input, string(gold), string(tags))
		}
		if _, err := s.w().ExecContext(ctx, q.String(), args...); err != nil {
			return mapErr("insert dataset examples", err)
		}
	}
	return nil
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// FindDatasets lists the task's datasets by name.
func (s *Store) FindDatasets(ctx context.Context, taskID int64) ([]*dynabench.Dataset, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+datasetCols+` FROM datasets WHERE task_id = $1 ORDER BY lower(name)`, taskID)
	if err != nil {
		return nil, mapErr("datasets", err)
	}
	defer rows.Close()
	var out []*dynabench.Dataset
	for rows.Next() {
		d, err := scanDataset(rows)
		if err != nil {
			return nil, mapErr("datasets", err)
		}
		out = append(out, d)
	}
	return out, mapErr("datasets", rows.Err())
}

// FindDatasetByID returns the dataset or ENOTFOUND.
func (s *Store) FindDatasetByID(ctx context.Context, id int64) (*dynabench.Dataset, error) {
	d, err := scanDataset(s.r().QueryRowContext(ctx, `SELECT `+datasetCols+` FROM datasets WHERE id = $1`, id))
	return d, mapErr("dataset", err)
}

// FindDatasetByName returns the task's dataset of that name (case-insensitive) or ENOTFOUND.
func (s *Store) FindDatasetByName(ctx context.Context, taskID int64, name string) (*dynabench.Dataset, error) {
	d, err := scanDataset(s.r().QueryRowContext(ctx,
		`SELECT `+datasetCols+` FROM datasets WHERE task_id = $1 AND lower(name) = lower($2)`, taskID, name))
	return d, mapErr("dataset", err)
}

// FindDatasetExamples lists one variant of the dataset in order.
func (s *Store) FindDatasetExamples(ctx context.Context, datasetID int64, variant string) ([]*dynabench.DatasetExample, error) {
	rows, err := s.r().QueryContext(ctx,
		`SELECT variant, idx, uid, original_uid, perturbation, input, gold, tags FROM dataset_examples
		 WHERE dataset_id = $1 AND variant = $2 ORDER BY idx`, datasetID, variant)
	if err != nil {
		return nil, mapErr("dataset examples", err)
	}
	defer rows.Close()
	var out []*dynabench.DatasetExample
	for rows.Next() {
		e := &dynabench.DatasetExample{DatasetID: datasetID}
		var input, gold, tags []byte
		if err := rows.Scan(&e.Variant, &e.Idx, &e.UID, &e.OriginalUID, &e.Perturbation, &input, &gold, &tags); err != nil {
			return nil, mapErr("dataset examples", err)
		}
		if e.Input, err = decodeMap(input); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(gold, &e.Gold); err != nil {
			return nil, fmt.Errorf("sqlstore: dataset example gold: %w", err)
		}
		if err := json.Unmarshal(tags, &e.Tags); err != nil {
			return nil, fmt.Errorf("sqlstore: dataset example tags: %w", err)
		}
		out = append(out, e)
	}
	return out, mapErr("dataset examples", rows.Err())
}

// DeleteDataset deletes the dataset, its examples and its evaluations; ENOTFOUND when it is gone.
func (s *Store) DeleteDataset(ctx context.Context, id int64) error {
	res, err := s.w().ExecContext(ctx, `DELETE FROM datasets WHERE id = $1`, id)
	if err != nil {
		return mapErr("delete dataset", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return dynabench.Errorf(dynabench.ENOTFOUND, "dataset not found")
	}
	return nil
}
