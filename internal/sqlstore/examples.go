package sqlstore

import (
	"context"
	"database/sql"

	"github.com/dynabench-go/dynabench"
)

const exampleCols = `e.id, e.task_id, e.round_id, (SELECT number FROM rounds r WHERE r.id = e.round_id), e.context_id,
	e.user_id, e.input, e.model_id, e.model_name, e.model_output, e.model_wrong, e.model_error, e.status, e.flagged,
	e.flag_reason, e.metadata, e.tag, e.n_correct, e.n_incorrect, e.n_flagged, e.created_at`

func scanExample(row interface{ Scan(...any) error }) (*dynabench.Example, error) {
	var e dynabench.Example
	var input, output, meta []byte
	var modelID sql.NullInt64
	var wrong sql.NullBool
	var created int64
	if err := row.Scan(&e.ID, &e.TaskID, &e.RoundID, &e.RoundNumber, &e.ContextID, &e.UserID, &input, &modelID,
		&e.ModelName, &output, &wrong, &e.ModelError, &e.Status, &e.Flagged, &e.FlagReason, &meta, &e.Tag,
		&e.Counts.Correct, &e.Counts.Incorrect, &e.Counts.Flagged, &created); err != nil {
		return nil, err
	}
	var err error
	if e.Input, err = decodeMap(input); err != nil {
		return nil, err
	}
	if e.ModelOutput, err = decodeMap(output); err != nil {
		return nil, err
	}
	if e.Metadata, err = decodeMap(meta); err != nil {
		return nil, err
	}
	if modelID.Valid {
		e.ModelID = &modelID.Int64
	}
	if wrong.Valid {
		e.ModelWrong = &wrong.Bool
	}
	e.CreatedAt = fromMillis(created)
	return &e, nil
}

func nullBool(b *bool) sql.NullBool {
	if b == nil {
		return sql.NullBool{}
	}
	return sql.NullBool{Bool: *b, Valid: true}
}

func nullID(id *int64) sql.NullInt64 {
	if id == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *id, Valid: true}
}

// CreateExample inserts the example row (counters are the caller's, via ApplyStats in the same tx).
func (s *Store) CreateExample(ctx context.Context, e *dynabench.Example) error {
	input, err := encodeJSON(e.Input)
	if err != nil {
		return err
	}
	output, err := encodeJSON(e.ModelOutput)
	if err != nil {
		return err
	}
	meta, err := encodeJSON(e.Metadata)
	if err != nil {
		return err
	}
	if e.Status == "" {
		e.Status = dynabench.StatusPending
	}
	now := s.now()
	err = s.w().QueryRowContext(ctx,
		`INSERT INTO examples (task_id, round_id, context_id, user_id, input, model_id, model_name, model_output,
		 model_wrong, model_error, status, flagged, flag_reason, metadata, tag, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`,
		e.TaskID, e.RoundID, e.ContextID, e.UserID, input, nullID(e.ModelID), e.ModelName, output,
		nullBool(e.ModelWrong), e.ModelError, e.Status, e.Flagged, e.FlagReason, meta, e.Tag, now).Scan(&e.ID)
	if err != nil {
		return mapErr("create example", err)
	}
	e.CreatedAt = fromMillis(now)
	return nil
}

// FindExampleByID returns the example or ENOTFOUND.
func (s *Store) FindExampleByID(ctx context.Context, id int64) (*dynabench.Example, error) {
	e, err := scanExample(s.r().QueryRowContext(ctx, `SELECT `+exampleCols+` FROM examples e WHERE e.id = $1`, id))
	return e, mapErr("example", err)
}

// LockExample is FindExampleByID that, in a PostgreSQL transaction, holds the row lock until commit,
// so two validators racing for the deciding vote are serialised.
func (s *Store) LockExample(ctx context.Context, id int64) (*dynabench.Example, error) {
	e, err := scanExample(s.w().QueryRowContext(ctx,
		`SELECT `+exampleCols+` FROM examples e WHERE e.id = $1`+s.forUpdate(), id))
	return e, mapErr("example", err)
}

// UpdateExample writes the example's mutable fields.
func (s *Store) UpdateExample(ctx context.Context, e *dynabench.Example) error {
	output, err := encodeJSON(e.ModelOutput)
	if err != nil {
		return err
	}
	meta, err := encodeJSON(e.Metadata)
	if err != nil {
		return err
	}
	res, err := s.w().ExecContext(ctx,
		`UPDATE examples SET model_id = $1, model_name = $2, model_output = $3, model_wrong = $4, model_error = $5,
		 status = $6, flagged = $7, flag_reason = $8, metadata = $9, n_correct = $10, n_incorrect = $11, n_flagged = $12
		 WHERE id = $13`,
		nullID(e.ModelID), e.ModelName, output, nullBool(e.ModelWrong), e.ModelError, e.Status, e.Flagged, e.FlagReason,
		meta, e.Counts.Correct, e.Counts.Incorrect, e.Counts.Flagged, e.ID)
	return expectOne(res, err, "example")
}

// NextExampleToValidate picks the next example due for the user's validation. Examples whose model
// answer is unknown (model failed, ask_user pending) are not due until it is known.
func (s *Store) NextExampleToValidate(ctx context.Context, q dynabench.ValidationQuery) (*dynabench.Example, error) {
	e, err := scanExample(s.r().QueryRowContext(ctx, `SELECT `+exampleCols+` FROM examples e
		WHERE e.round_id = $1 AND e.user_id <> $2 AND e.status = 'pending_validation'
		  AND (e.model_wrong = TRUE OR ($3 AND e.model_wrong IS NOT NULL))
		  AND NOT EXISTS (SELECT 1 FROM validations v WHERE v.example_id = e.id AND v.user_id = $2)
		ORDER BY CASE WHEN e.model_wrong = TRUE THEN 0 ELSE 1 END, e.n_correct + e.n_incorrect + e.n_flagged, e.id
		LIMIT 1`, q.RoundID, q.UserID, q.NonFooling))
	return e, mapErr("example to validate", err)
}

// CreateValidation inserts a validation; ECONFLICT when the user already voted in that mode.
func (s *Store) CreateValidation(ctx context.Context, v *dynabench.Validation) error {
	meta, err := encodeJSON(v.Metadata)
	if err != nil {
		return err
	}
	now := s.now()
	err = s.w().QueryRowContext(ctx,
		`INSERT INTO validations (example_id, user_id, label, mode, metadata, created_at) VALUES ($1, $2, $3, $4, $5, $6)
		 RETURNING id`, v.ExampleID, v.UserID, v.Label, v.Mode, meta, now).Scan(&v.ID)
	if err != nil {
		return mapErr("create validation", err)
	}
	v.CreatedAt = fromMillis(now)
	return nil
}

// FindValidations lists an example's validations in order.
func (s *Store) FindValidations(ctx context.Context, exampleID int64) ([]*dynabench.Validation, error) {
	rows, err := s.r().QueryContext(ctx,
		`SELECT id, example_id, user_id, label, mode, metadata, created_at FROM validations WHERE example_id = $1 ORDER BY id`, exampleID)
	if err != nil {
		return nil, mapErr("validations", err)
	}
	defer rows.Close()
	var out []*dynabench.Validation
	for rows.Next() {
		var v dynabench.Validation
		var meta []byte
		var created int64
		if err := rows.Scan(&v.ID, &v.ExampleID, &v.UserID, &v.Label, &v.Mode, &meta, &created); err != nil {
			return nil, mapErr("validations", err)
		}
		if v.Metadata, err = decodeMap(meta); err != nil {
			return nil, err
		}
		v.CreatedAt = fromMillis(created)
		out = append(out, &v)
	}
	return out, mapErr("validations", rows.Err())
}
