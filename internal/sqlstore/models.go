package sqlstore

import (
	"context"

	"github.com/dynabench-go/dynabench"
)

const modelCols = `id, task_id, user_id, name, kind, url, options, card, published, created_at`

func scanModel(row interface{ Scan(...any) error }) (*dynabench.Model, error) {
	var m dynabench.Model
	var opts []byte
	var created int64
	if err := row.Scan(&m.ID, &m.TaskID, &m.UserID, &m.Name, &m.Kind, &m.URL, &opts, &m.Card, &m.Published, &created); err != nil {
		return nil, err
	}
	var err error
	if m.Options, err = decodeMap(opts); err != nil {
		return nil, err
	}
	m.CreatedAt = fromMillis(created)
	return &m, nil
}

// CreateModel registers a model.
func (s *Store) CreateModel(ctx context.Context, m *dynabench.Model) error {
	opts, err := encodeJSON(m.Options)
	if err != nil {
		return err
	}
	now := s.now()
	err = s.w().QueryRowContext(ctx,
		`INSERT INTO models (task_id, user_id, name, kind, url, options, card, published, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		m.TaskID, m.UserID, m.Name, m.Kind, m.URL, opts, m.Card, m.Published, now).Scan(&m.ID)
	if err != nil {
		return mapErr("create model", err)
	}
	m.CreatedAt = fromMillis(now)
	return nil
}

// FindModelByID returns the model or ENOTFOUND.
func (s *Store) FindModelByID(ctx context.Context, id int64) (*dynabench.Model, error) {
	m, err := scanModel(s.r().QueryRowContext(ctx, `SELECT `+modelCols+` FROM models WHERE id = $1`, id))
	return m, mapErr("model", err)
}

// FindModels lists the task's models.
func (s *Store) FindModels(ctx context.Context, taskID int64) ([]*dynabench.Model, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+modelCols+` FROM models WHERE task_id = $1 ORDER BY id`, taskID)
	if err != nil {
		return nil, mapErr("models", err)
	}
	defer rows.Close()
	var out []*dynabench.Model
	for rows.Next() {
		m, err := scanModel(rows)
		if err != nil {
			return nil, mapErr("models", err)
		}
		out = append(out, m)
	}
	return out, mapErr("models", rows.Err())
}
