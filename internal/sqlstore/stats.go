package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/dynabench-go/dynabench"
)

// ApplyStats adds d to the counters of the example's round, context and user × round.
func (s *Store) ApplyStats(ctx context.Context, e *dynabench.Example, d dynabench.StatsDelta) error {
	if d.IsZero() {
		return nil
	}
	if d.Collected != 0 || d.Fooled != 0 || d.VerifiedFooled != 0 || d.Rejected != 0 {
		// The example's shard of the round's counters: concurrent submissions to one round touch
		// different rows, so on PostgreSQL they do not queue behind one row lock.
		_, err := s.w().ExecContext(ctx, `INSERT INTO round_counts (round_id, shard, collected, fooled, verified_fooled, rejected)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (round_id, shard) DO UPDATE SET collected = round_counts.collected + excluded.collected,
				fooled = round_counts.fooled + excluded.fooled, verified_fooled = round_counts.verified_fooled + excluded.verified_fooled,
				rejected = round_counts.rejected + excluded.rejected`,
			e.RoundID, e.ID%roundShards, d.Collected, d.Fooled, d.VerifiedFooled, d.Rejected)
		if err != nil {
			return mapErr("round stats", err)
		}
	}
	if d.Collected != 0 || d.Fooled != 0 {
		res, err := s.w().ExecContext(ctx, `UPDATE contexts SET total_used = total_used + $1, total_fooled = total_fooled + $2
			WHERE id = $3`, d.Collected, d.Fooled, e.ContextID)
		if err := expectOne(res, err, "context"); err != nil {
			return err
		}
	}
	_, err := s.w().ExecContext(ctx, `INSERT INTO round_users (round_id, user_id, task_id, submitted, fooled,
			verified_fooled, rejected_fooled, retracted) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (round_id, user_id) DO UPDATE SET submitted = round_users.submitted + excluded.submitted,
			fooled = round_users.fooled + excluded.fooled, verified_fooled = round_users.verified_fooled + excluded.verified_fooled,
			rejected_fooled = round_users.rejected_fooled + excluded.rejected_fooled, retracted = round_users.retracted + excluded.retracted`,
		e.RoundID, e.UserID, e.TaskID, d.Collected, d.Fooled, d.VerifiedFooled, d.RejectedFooled, d.Retracted)
	return mapErr("round user stats", err)
}

// roundShards is how many rows a round's counters are spread over.
const roundShards = 16

// CountValidation adds one validation to the validator's row for the round. The row is selected
// from the round so that an unknown round inserts nothing (ENOTFOUND) instead of a NULL task_id.
// (SQLite needs the WHERE clause to parse INSERT ... SELECT ... ON CONFLICT.)
func (s *Store) CountValidation(ctx context.Context, roundID, userID int64) error {
	res, err := s.w().ExecContext(ctx, `INSERT INTO round_users (round_id, user_id, task_id, validations)
		SELECT id, $2, task_id, 1 FROM rounds WHERE id = $1
		ON CONFLICT (round_id, user_id) DO UPDATE SET validations = round_users.validations + 1`, roundID, userID)
	return expectOne(res, err, "round")
}

// BumpDailyCount counts one more example for the day, refusing past max (when max > 0).
func (s *Store) BumpDailyCount(ctx context.Context, userID, taskID int64, day string, max int) error {
	var n int
	err := s.w().QueryRowContext(ctx, `INSERT INTO daily_counts (user_id, task_id, day, n) VALUES ($1, $2, $3, 1)
		ON CONFLICT (user_id, task_id, day) DO UPDATE SET n = daily_counts.n + 1 RETURNING n`, userID, taskID, day).Scan(&n)
	if err != nil {
		return mapErr("daily count", err)
	}
	if max > 0 && n > max {
		// Undo: the caller's transaction may still commit other work, and a refused example must not count.
		if _, err := s.w().ExecContext(ctx, `UPDATE daily_counts SET n = n - 1 WHERE user_id = $1 AND task_id = $2 AND day = $3`,
			userID, taskID, day); err != nil {
			return mapErr("daily count", err)
		}
		return dynabench.Errorf(dynabench.ERATELIMIT, "daily limit of %d examples for this task reached; try again tomorrow (UTC)", max)
	}
	return nil
}

const annotatorCols = `ru.user_id, u.username, sum(ru.submitted), sum(ru.fooled), sum(ru.verified_fooled),
	sum(ru.rejected_fooled), sum(ru.retracted), sum(ru.validations)`

func scanAnnotator(row interface{ Scan(...any) error }, a *dynabench.AnnotatorStats) error {
	return row.Scan(&a.UserID, &a.Username, &a.Submitted, &a.Fooled, &a.VerifiedFooled, &a.RejectedFooled,
		&a.Retracted, &a.Validations)
}

// AnnotatorStats ranks the task's annotators by verified fooling examples, then fooling examples
// not rejected, then examples written; roundID 0 sums every round. The CAST keeps PostgreSQL from
// typing $2 as a 32-bit integer after the literal 0 (ids past 2^31 would fail to encode).
func (s *Store) AnnotatorStats(ctx context.Context, taskID, roundID int64, limit int) ([]dynabench.AnnotatorStats, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+annotatorCols+` FROM round_users ru JOIN users u ON u.id = ru.user_id
		WHERE ru.task_id = $1 AND (CAST($2 AS BIGINT) = 0 OR ru.round_id = $2)
		GROUP BY ru.user_id, u.username
		HAVING sum(ru.submitted) > 0
		ORDER BY sum(ru.verified_fooled) DESC, sum(ru.fooled) - sum(ru.rejected_fooled) DESC, sum(ru.submitted) DESC, ru.user_id
		LIMIT $3`, taskID, roundID, limit)
	if err != nil {
		return nil, mapErr("annotators", err)
	}
	defer rows.Close()
	out := []dynabench.AnnotatorStats{}
	for rows.Next() {
		var a dynabench.AnnotatorStats
		if err := scanAnnotator(rows, &a); err != nil {
			return nil, mapErr("annotators", err)
		}
		out = append(out, a)
	}
	return out, mapErr("annotators", rows.Err())
}

// UserStats sums the user's rows per task.
func (s *Store) UserStats(ctx context.Context, userID int64) (map[string]dynabench.AnnotatorStats, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT t.code, `+annotatorCols+` FROM round_users ru
		JOIN users u ON u.id = ru.user_id JOIN tasks t ON t.id = ru.task_id
		WHERE ru.user_id = $1 GROUP BY t.code, ru.user_id, u.username`, userID)
	if err != nil {
		return nil, mapErr("user stats", err)
	}
	defer rows.Close()
	out := map[string]dynabench.AnnotatorStats{}
	for rows.Next() {
		var code string
		var a dynabench.AnnotatorStats
		if err := rows.Scan(&code, &a.UserID, &a.Username, &a.Submitted, &a.Fooled, &a.VerifiedFooled,
			&a.RejectedFooled, &a.Retracted, &a.Validations); err != nil {
			return nil, mapErr("user stats", err)
		}
		out[code] = a
	}
	return out, mapErr("user stats", rows.Err())
}

// recountCheck compares one stored counter query with one counted-from-rows query. Both return
// rows of (key, v1, v2, ...) with the same number of values; missing keys count as zeros.
type recountCheck struct {
	table    string
	counters []string
	stored   string
	counted  string
}

var recountChecks = []recountCheck{
	{"rounds", []string{"collected", "fooled", "verified_fooled", "rejected"},
		`SELECT CAST(round_id AS TEXT), sum(collected), sum(fooled), sum(verified_fooled), sum(rejected)
		 FROM round_counts GROUP BY round_id`,
		`SELECT CAST(round_id AS TEXT), ` + contributionSums + ` FROM examples GROUP BY round_id`},
	{"contexts", []string{"total_used", "total_fooled"},
		`SELECT CAST(id AS TEXT), total_used, total_fooled FROM contexts`,
		`SELECT CAST(context_id AS TEXT), sum(CASE WHEN status <> 'retracted' THEN 1 ELSE 0 END),
			sum(CASE WHEN status <> 'retracted' AND model_wrong = TRUE THEN 1 ELSE 0 END) FROM examples GROUP BY context_id`},
	{"round_users", []string{"submitted", "fooled", "verified_fooled", "rejected_fooled", "retracted"},
		`SELECT CAST(round_id AS TEXT) || '/' || CAST(user_id AS TEXT), submitted, fooled, verified_fooled, rejected_fooled, retracted FROM round_users`,
		`SELECT CAST(round_id AS TEXT) || '/' || CAST(user_id AS TEXT),
			sum(CASE WHEN status <> 'retracted' THEN 1 ELSE 0 END),
			sum(CASE WHEN status <> 'retracted' AND model_wrong = TRUE THEN 1 ELSE 0 END),
			sum(CASE WHEN status = 'verified' AND model_wrong = TRUE THEN 1 ELSE 0 END),
			sum(CASE WHEN status = 'rejected' AND model_wrong = TRUE THEN 1 ELSE 0 END),
			sum(CASE WHEN status = 'retracted' THEN 1 ELSE 0 END)
		 FROM examples GROUP BY round_id, user_id`},
	{"round_users", []string{"validations"},
		`SELECT CAST(round_id AS TEXT) || '/' || CAST(user_id AS TEXT), validations FROM round_users`,
		`SELECT CAST(e.round_id AS TEXT) || '/' || CAST(v.user_id AS TEXT), count(*) FROM validations v
		 JOIN examples e ON e.id = v.example_id GROUP BY e.round_id, v.user_id`},
	{"examples", []string{"n_correct", "n_incorrect", "n_flagged"},
		`SELECT CAST(id AS TEXT), n_correct, n_incorrect, n_flagged FROM examples`,
		`SELECT CAST(example_id AS TEXT), sum(CASE WHEN label = 'correct' THEN 1 ELSE 0 END),
			sum(CASE WHEN label = 'incorrect' THEN 1 ELSE 0 END), sum(CASE WHEN label = 'flagged' THEN 1 ELSE 0 END)
		 FROM validations WHERE mode = 'user' GROUP BY example_id`},
}

// contributionSums is dynabench.Contribution written in SQL, for the round counters.
const contributionSums = `sum(CASE WHEN status <> 'retracted' THEN 1 ELSE 0 END),
	sum(CASE WHEN status <> 'retracted' AND model_wrong = TRUE THEN 1 ELSE 0 END),
	sum(CASE WHEN status = 'verified' AND model_wrong = TRUE THEN 1 ELSE 0 END),
	sum(CASE WHEN status = 'rejected' THEN 1 ELSE 0 END)`

// Recount recomputes every counter from the rows, in one read transaction so that it sees one
// snapshot, and lists the differences.
func (s *Store) Recount(ctx context.Context) ([]dynabench.Drift, error) {
	if s.tx == nil {
		opts := &sql.TxOptions{ReadOnly: true}
		if s.db.Engine == Postgres {
			opts.Isolation = sql.LevelRepeatableRead
		}
		tx, err := s.db.read.BeginTx(ctx, opts)
		if err != nil {
			return nil, mapErr("recount", err)
		}
		defer tx.Rollback()
		return (&Store{db: s.db, tx: tx}).Recount(ctx)
	}
	var drift []dynabench.Drift
	for _, c := range recountChecks {
		stored, err := s.loadCounts(ctx, c.stored, len(c.counters))
		if err != nil {
			return nil, err
		}
		counted, err := s.loadCounts(ctx, c.counted, len(c.counters))
		if err != nil {
			return nil, err
		}
		for key := range union(stored, counted) {
			sv, cv := stored[key], counted[key]
			for i, name := range c.counters {
				if at(sv, i) != at(cv, i) {
					drift = append(drift, dynabench.Drift{Table: c.table, Key: key, Counter: name, Stored: at(sv, i), Counted: at(cv, i)})
				}
			}
		}
	}
	slices.SortFunc(drift, func(a, b dynabench.Drift) int {
		return cmp.Or(cmp.Compare(a.Table, b.Table), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Counter, b.Counter))
	})
	return drift, nil
}

func (s *Store) loadCounts(ctx context.Context, query string, n int) (map[string][]int64, error) {
	rows, err := s.r().QueryContext(ctx, query)
	if err != nil {
		return nil, mapErr("recount", err)
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var key string
		vals := make([]int64, n)
		dest := []any{&key}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, mapErr("recount", fmt.Errorf("%s: %w", query[:40], err))
		}
		out[key] = vals
	}
	return out, mapErr("recount", rows.Err())
}

func union(a, b map[string][]int64) map[string]struct{} {
	u := make(map[string]struct{}, len(a)+len(b))
	for k := range a {
		u[k] = struct{}{}
	}
	for k := range b {
		u[k] = struct{}{}
	}
	return u
}

func at(v []int64, i int) int64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}
