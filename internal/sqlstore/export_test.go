package sqlstore

import (
	"context"
	"database/sql"
)

// This file lends the external test package (sqlstore_test) a few handles on the raw database: to
// inject counter drift the store would never write, to count rows no Store method lists, and to
// observe that a writer is blocked without relying on timing.

// ExecRaw runs a statement on the writer, outside any transaction.
func (db *DB) ExecRaw(ctx context.Context, query string, args ...any) error {
	_, err := db.write.ExecContext(ctx, query, args...)
	return err
}

// CountRaw runs a query returning one integer on the writer (so it sees every committed write).
func (db *DB) CountRaw(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := db.write.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

// WriterStats reports the write pool's statistics; on SQLite WaitCount rises when a transaction
// queues for the single writer connection.
func (db *DB) WriterStats() sql.DBStats { return db.write.Stats() }

// BackendPID returns the PostgreSQL backend process id of the store's connection (its transaction's
// connection inside InTx), so a test can ask pg_blocking_pids who waits on it.
func (s *Store) BackendPID(ctx context.Context) (int64, error) {
	var pid int64
	err := s.w().QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid)
	return pid, err
}

// QueuedTx is how many transactions wait for SQLite's group committer.
func (db *DB) QueuedTx() int {
	if db.committer == nil {
		return 0
	}
	return db.committer.queued()
}
