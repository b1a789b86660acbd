package sqlstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/dynabench-go/dynabench"
)

const releaseCols = `id, task_id, round_number, version, dataset_id, dir, manifest, datasheet, canary, public, created_by, created_at`

func scanRelease(row interface{ Scan(...any) error }) (*dynabench.Release, error) {
	var r dynabench.Release
	var datasetID, createdBy *int64
	var manifest string
	var created int64
	if err := row.Scan(&r.ID, &r.TaskID, &r.RoundNumber, &r.Version, &datasetID, &r.Dir, &manifest, &r.Datasheet, &r.Canary,
		&r.Public, &createdBy, &created); err != nil {
		return nil, err
	}
	if datasetID != nil {
		r.DatasetID = *datasetID
	}
	if createdBy != nil {
		r.CreatedBy = *createdBy
	}
	r.Manifest, r.CreatedAt = []byte(manifest), fromMillis(created)
	return &r, nil
}

// CreateRelease records a release; ECONFLICT when that round already has that version.
func (s *Store) CreateRelease(ctx context.Context, r *dynabench.Release) error {
	var datasetID, createdBy any
	if r.DatasetID != 0 {
		datasetID = r.DatasetID
	}
	if r.CreatedBy != 0 {
		createdBy = r.CreatedBy
	}
	now := s.now()
	err := s.w().QueryRowContext(ctx,
		`INSERT INTO releases (task_id, round_number, version, dataset_id, dir, manifest, datasheet, canary, public, created_by, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
		r.TaskID, r.RoundNumber, r.Version, datasetID, r.Dir, string(r.Manifest), r.Datasheet, r.Canary, r.Public, createdBy, now).Scan(&r.ID)
	if err != nil {
		return mapErr("create release", err)
	}
	r.CreatedAt = fromMillis(now)
	return nil
}

// FindReleases lists the task's releases by round, then version.
func (s *Store) FindReleases(ctx context.Context, taskID int64) ([]*dynabench.Release, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+releaseCols+` FROM releases WHERE task_id = $1 ORDER BY round_number, version`, taskID)
	if err != nil {
		return nil, mapErr("releases", err)
	}
	defer rows.Close()
	var out []*dynabench.Release
	for rows.Next() {
		r, err := scanRelease(rows)
		if err != nil {
			return nil, mapErr("releases", err)
		}
		out = append(out, r)
	}
	return out, mapErr("releases", rows.Err())
}

// SetReleasePublic lets anyone download a release's files, or stops it.
func (s *Store) SetReleasePublic(ctx context.Context, id int64, public bool) error {
	res, err := s.w().ExecContext(ctx, `UPDATE releases SET public = $2 WHERE id = $1`, id, public)
	if err != nil {
		return mapErr("release", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return dynabench.Errorf(dynabench.ENOTFOUND, "release not found")
	}
	return nil
}

// InstallSecret returns the install's secret, creating it on first use (every replica then reads
// the same one).
func (s *Store) InstallSecret(ctx context.Context) ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if _, err := s.w().ExecContext(ctx,
		`INSERT INTO install_settings (name, value) VALUES ('secret', $1) ON CONFLICT (name) DO NOTHING`, hex.EncodeToString(b)); err != nil {
		return nil, mapErr("install secret", err)
	}
	var v string
	if err := s.w().QueryRowContext(ctx, `SELECT value FROM install_settings WHERE name = 'secret'`).Scan(&v); err != nil {
		return nil, mapErr("install secret", err)
	}
	return hex.DecodeString(v)
}
