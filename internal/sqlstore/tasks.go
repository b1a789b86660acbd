package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/dynabench-go/dynabench"
)

const taskCols = `id, code, name, description, config, config_rev, current_round, settings, created_at`

func scanTask(row interface{ Scan(...any) error }) (*dynabench.Task, error) {
	var t dynabench.Task
	var settings []byte
	var created int64
	if err := row.Scan(&t.ID, &t.Code, &t.Name, &t.Description, &t.ConfigSource, &t.ConfigRev,
		&t.CurrentRound, &settings, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(settings, &t.Settings); err != nil {
		return nil, err
	}
	t.Settings.Normalize()
	t.CreatedAt = fromMillis(created)
	return &t, nil
}

// CreateTask inserts the task (without rounds); ECONFLICT when the code is taken.
func (s *Store) CreateTask(ctx context.Context, t *dynabench.Task) error {
	t.Settings.Normalize()
	settings, err := encodeJSON(t.Settings)
	if err != nil {
		return err
	}
	now := s.now()
	err = s.w().QueryRowContext(ctx,
		`INSERT INTO tasks (code, name, description, config, settings, created_at) VALUES ($1, $2, $3, $4, $5, $6)
		 RETURNING id, config_rev`,
		t.Code, t.Name, t.Description, t.ConfigSource, settings, now).Scan(&t.ID, &t.ConfigRev)
	if err != nil {
		return mapErr("create task", err)
	}
	t.CreatedAt = fromMillis(now)
	return nil
}

// FindTaskByCode returns the task or ENOTFOUND.
func (s *Store) FindTaskByCode(ctx context.Context, code string) (*dynabench.Task, error) {
	t, err := scanTask(s.r().QueryRowContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE code = $1`, code))
	return t, mapErr("task", err)
}

// FindTaskByID returns the task or ENOTFOUND.
func (s *Store) FindTaskByID(ctx context.Context, id int64) (*dynabench.Task, error) {
	t, err := scanTask(s.r().QueryRowContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE id = $1`, id))
	return t, mapErr("task", err)
}

// FindTasks lists every task in creation order.
func (s *Store) FindTasks(ctx context.Context) ([]*dynabench.Task, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+taskCols+` FROM tasks ORDER BY id`)
	if err != nil {
		return nil, mapErr("tasks", err)
	}
	defer rows.Close()
	var out []*dynabench.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, mapErr("tasks", err)
		}
		out = append(out, t)
	}
	return out, mapErr("tasks", rows.Err())
}

// UpdateTaskConfig replaces the config and bumps its revision.
func (s *Store) UpdateTaskConfig(ctx context.Context, taskID int64, source string) error {
	res, err := s.w().ExecContext(ctx, `UPDATE tasks SET config = $1, config_rev = config_rev + 1 WHERE id = $2`, source, taskID)
	return expectOne(res, err, "task")
}

// UpdateTaskSettings replaces the settings.
func (s *Store) UpdateTaskSettings(ctx context.Context, taskID int64, st dynabench.TaskSettings) error {
	st.Normalize()
	settings, err := encodeJSON(st)
	if err != nil {
		return err
	}
	res, err := s.w().ExecContext(ctx, `UPDATE tasks SET settings = $1 WHERE id = $2`, settings, taskID)
	return expectOne(res, err, "task")
}

// AddTaskOwner makes the user an owner of the task; adding twice is fine.
func (s *Store) AddTaskOwner(ctx context.Context, taskID, userID int64) error {
	_, err := s.w().ExecContext(ctx,
		`INSERT INTO task_owners (task_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, taskID, userID)
	return mapErr("add owner", err)
}

// IsTaskOwner reports whether the user owns the task.
func (s *Store) IsTaskOwner(ctx context.Context, taskID, userID int64) (bool, error) {
	var n int
	err := s.r().QueryRowContext(ctx,
		`SELECT count(*) FROM task_owners WHERE task_id = $1 AND user_id = $2`, taskID, userID).Scan(&n)
	return n > 0, mapErr("owner", err)
}

// roundCols reads a round with its counters summed over their shards (see ApplyStats).
const roundCols = `id, task_id, number, status, secret,
	CAST(COALESCE((SELECT sum(c.collected) FROM round_counts c WHERE c.round_id = rounds.id), 0) AS BIGINT),
	CAST(COALESCE((SELECT sum(c.fooled) FROM round_counts c WHERE c.round_id = rounds.id), 0) AS BIGINT),
	CAST(COALESCE((SELECT sum(c.verified_fooled) FROM round_counts c WHERE c.round_id = rounds.id), 0) AS BIGINT),
	CAST(COALESCE((SELECT sum(c.rejected) FROM round_counts c WHERE c.round_id = rounds.id), 0) AS BIGINT),
	created_at, closed_at, loop_mode`

func (s *Store) scanRound(ctx context.Context, row interface{ Scan(...any) error }) (*dynabench.Round, error) {
	var r dynabench.Round
	var created int64
	var closed sql.NullInt64
	if err := row.Scan(&r.ID, &r.TaskID, &r.Number, &r.Status, &r.Secret, &r.Stats.Collected, &r.Stats.Fooled,
		&r.Stats.VerifiedFooled, &r.Stats.Rejected, &created, &closed, &r.LoopMode); err != nil {
		return nil, err
	}
	r.Stats.Rates()
	r.CreatedAt, r.ClosedAt = fromMillis(created), fromNullMillis(closed)
	return &r, nil
}

func (s *Store) attachModels(ctx context.Context, rounds ...*dynabench.Round) error {
	for _, r := range rounds {
		rows, err := s.r().QueryContext(ctx, `SELECT model_id FROM round_models WHERE round_id = $1 ORDER BY position`, r.ID)
		if err != nil {
			return mapErr("round models", err)
		}
		r.ModelIDs = []int64{}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return mapErr("round models", err)
			}
			r.ModelIDs = append(r.ModelIDs, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return mapErr("round models", err)
		}
	}
	return nil
}

// CreateRound inserts the round with its models and makes it the task's current round.
func (s *Store) CreateRound(ctx context.Context, r *dynabench.Round) error {
	return s.InTx(ctx, func(dtx dynabench.Store) error {
		tx := dtx.(*Store)
		now := tx.now()
		if r.Status == "" {
			r.Status = dynabench.RoundOpen
		}
		if r.LoopMode == "" {
			r.LoopMode = dynabench.LoopRandom
		}
		err := tx.w().QueryRowContext(ctx,
			`INSERT INTO rounds (task_id, number, status, secret, created_at, loop_mode) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
			r.TaskID, r.Number, r.Status, r.Secret, now, r.LoopMode).Scan(&r.ID)
		if err != nil {
			return mapErr("create round", err)
		}
		r.CreatedAt = fromMillis(now)
		if _, err := tx.w().ExecContext(ctx, `UPDATE tasks SET current_round = $1 WHERE id = $2`, r.Number, r.TaskID); err != nil {
			return mapErr("create round", err)
		}
		return tx.SetRoundModels(ctx, r.ID, r.ModelIDs)
	})
}

// FindRound returns round number n of the task.
func (s *Store) FindRound(ctx context.Context, taskID int64, number int) (*dynabench.Round, error) {
	r, err := s.scanRound(ctx, s.r().QueryRowContext(ctx,
		`SELECT `+roundCols+` FROM rounds WHERE task_id = $1 AND number = $2`, taskID, number))
	if err != nil {
		return nil, mapErr("round", err)
	}
	return r, s.attachModels(ctx, r)
}

// FindRoundByID returns the round.
func (s *Store) FindRoundByID(ctx context.Context, id int64) (*dynabench.Round, error) {
	r, err := s.scanRound(ctx, s.r().QueryRowContext(ctx, `SELECT `+roundCols+` FROM rounds WHERE id = $1`, id))
	if err != nil {
		return nil, mapErr("round", err)
	}
	return r, s.attachModels(ctx, r)
}

// FindRounds lists the task's rounds in order.
func (s *Store) FindRounds(ctx context.Context, taskID int64) ([]*dynabench.Round, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+roundCols+` FROM rounds WHERE task_id = $1 ORDER BY number`, taskID)
	if err != nil {
		return nil, mapErr("rounds", err)
	}
	var out []*dynabench.Round
	for rows.Next() {
		r, err := s.scanRound(ctx, rows)
		if err != nil {
			rows.Close()
			return nil, mapErr("rounds", err)
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, mapErr("rounds", err)
	}
	return out, s.attachModels(ctx, out...)
}

// CloseRound marks the round closed.
func (s *Store) CloseRound(ctx context.Context, roundID int64, at time.Time) error {
	res, err := s.w().ExecContext(ctx, `UPDATE rounds SET status = $1, closed_at = $2 WHERE id = $3`,
		dynabench.RoundClosed, at.UnixMilli(), roundID)
	return expectOne(res, err, "round")
}

// SetRoundLoopMode sets how several models in the loop answer.
func (s *Store) SetRoundLoopMode(ctx context.Context, roundID int64, mode string) error {
	res, err := s.w().ExecContext(ctx, `UPDATE rounds SET loop_mode = $1 WHERE id = $2`, mode, roundID)
	return expectOne(res, err, "round")
}

// SetRoundModels replaces the round's models in the loop, keeping their order.
func (s *Store) SetRoundModels(ctx context.Context, roundID int64, modelIDs []int64) error {
	return s.InTx(ctx, func(dtx dynabench.Store) error {
		tx := dtx.(*Store)
		if _, err := tx.w().ExecContext(ctx, `DELETE FROM round_models WHERE round_id = $1`, roundID); err != nil {
			return mapErr("round models", err)
		}
		for i, id := range modelIDs {
			if _, err := tx.w().ExecContext(ctx,
				`INSERT INTO round_models (round_id, model_id, position) VALUES ($1, $2, $3)`, roundID, id, i); err != nil {
				return mapErr("round models", err)
			}
		}
		return nil
	})
}
