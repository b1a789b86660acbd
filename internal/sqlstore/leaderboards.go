package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dynabench-go/dynabench"
)

// CreateLeaderboardFork saves a fork; ECONFLICT when its slug is taken.
func (s *Store) CreateLeaderboardFork(ctx context.Context, f *dynabench.LeaderboardFork) error {
	mw, err := json.Marshal(f.MetricWeights)
	if err != nil {
		return err
	}
	dw, err := json.Marshal(f.DatasetWeights)
	if err != nil {
		return err
	}
	now := s.now()
	err = s.w().QueryRowContext(ctx,
		`INSERT INTO leaderboard_forks (task_id, slug, name, user_id, metric_weights, dataset_weights, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		f.TaskID, f.Slug, f.Name, f.UserID, string(mw), string(dw), now).Scan(&f.ID)
	if err != nil {
		return mapErr("create fork", err)
	}
	f.CreatedAt = fromMillis(now)
	return nil
}

// FindLeaderboardFork returns the fork with that slug or ENOTFOUND.
func (s *Store) FindLeaderboardFork(ctx context.Context, slug string) (*dynabench.LeaderboardFork, error) {
	var f dynabench.LeaderboardFork
	var mw, dw []byte
	var created int64
	err := s.r().QueryRowContext(ctx,
		`SELECT id, task_id, slug, name, user_id, metric_weights, dataset_weights, created_at FROM leaderboard_forks WHERE slug = $1`,
		slug).Scan(&f.ID, &f.TaskID, &f.Slug, &f.Name, &f.UserID, &mw, &dw, &created)
	if err != nil {
		return nil, mapErr("fork", err)
	}
	if err := json.Unmarshal(mw, &f.MetricWeights); err != nil {
		return nil, fmt.Errorf("sqlstore: fork weights: %w", err)
	}
	if err := json.Unmarshal(dw, &f.DatasetWeights); err != nil {
		return nil, fmt.Errorf("sqlstore: fork weights: %w", err)
	}
	f.CreatedAt = fromMillis(created)
	return &f, nil
}

// CreateLeaderboardSnapshot saves a frozen leaderboard; ECONFLICT when its slug is taken.
func (s *Store) CreateLeaderboardSnapshot(ctx context.Context, sn *dynabench.LeaderboardSnapshot) error {
	now := s.now()
	err := s.w().QueryRowContext(ctx,
		`INSERT INTO leaderboard_snapshots (task_id, slug, name, user_id, body, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		sn.TaskID, sn.Slug, sn.Name, sn.UserID, string(sn.Body), now).Scan(&sn.ID)
	if err != nil {
		return mapErr("create snapshot", err)
	}
	sn.CreatedAt = fromMillis(now)
	return nil
}

// FindLeaderboardSnapshot returns the snapshot with that slug or ENOTFOUND.
func (s *Store) FindLeaderboardSnapshot(ctx context.Context, slug string) (*dynabench.LeaderboardSnapshot, error) {
	var sn dynabench.LeaderboardSnapshot
	var body string
	var created int64
	err := s.r().QueryRowContext(ctx,
		`SELECT id, task_id, slug, name, user_id, body, created_at FROM leaderboard_snapshots WHERE slug = $1`,
		slug).Scan(&sn.ID, &sn.TaskID, &sn.Slug, &sn.Name, &sn.UserID, &body, &created)
	if err != nil {
		return nil, mapErr("snapshot", err)
	}
	sn.Body = []byte(body)
	sn.CreatedAt = fromMillis(created)
	return &sn, nil
}
