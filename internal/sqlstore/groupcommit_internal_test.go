package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
)

func openSQLiteForTest(t *testing.T) *Store {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "gc.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return NewStore(db)
}

// TestCommitterDetectsLostTransaction: when SQLite rolls the batch's transaction back by itself
// (simulated here by a ROLLBACK inside fn, as a full disk or an I/O error would), the caller must get
// an error, its earlier writes must be gone, and the writer must be usable afterwards, never left
// running later callers outside a transaction.
func TestCommitterDetectsLostTransaction(t *testing.T) {
	s := openSQLiteForTest(t)
	ctx := context.Background()
	err := s.InTx(ctx, func(tx dynabench.Store) error {
		if err := tx.CreateUser(ctx, &dynabench.User{Username: "lost", Email: "lost@x", PasswordHash: "h"}); err != nil {
			return err
		}
		_, err := tx.(*Store).w().ExecContext(ctx, "ROLLBACK")
		return err
	})
	if !dynabench.IsCode(err, dynabench.EUNAVAILABLE) {
		t.Fatalf("InTx after the transaction was lost: %v, want unavailable", err)
	}
	if _, err := s.FindUserByUsername(ctx, "lost"); !dynabench.IsCode(err, dynabench.ENOTFOUND) {
		t.Fatalf("the lost transaction's write is there: %v", err)
	}
	if err := s.InTx(ctx, func(tx dynabench.Store) error {
		return tx.CreateUser(ctx, &dynabench.User{Username: "after", Email: "after@x", PasswordHash: "h"})
	}); err != nil {
		t.Fatalf("writer unusable after a lost transaction: %v", err)
	}
	if _, err := s.FindUserByUsername(ctx, "after"); err != nil {
		t.Fatalf("the next transaction's write is missing: %v", err)
	}
}

// TestCommitterIgnoresCancellationMidway: a caller that cancels while its fn runs does not interrupt
// SQLite (which would roll back the whole batch, other callers' writes included); its fn finishes.
func TestCommitterIgnoresCancellationMidway(t *testing.T) {
	s := openSQLiteForTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	err := s.InTx(ctx, func(tx dynabench.Store) error {
		cancel()
		return tx.CreateUser(ctx, &dynabench.User{Username: "mid", Email: "mid@x", PasswordHash: "h"})
	})
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	if _, err := s.FindUserByUsername(context.Background(), "mid"); err != nil {
		t.Fatalf("write of a caller that cancelled midway: %v", err)
	}
}

// TestCommitterCloseNeverStrandsACaller: a transaction handed over while the database closes gets
// an error instead of waiting forever (a worker leasing jobs at shutdown hung the server's Serve).
func TestCommitterCloseNeverStrandsACaller(t *testing.T) {
	for range 200 {
		db, err := sql.Open("sqlite", "file::memory:")
		if err != nil {
			t.Fatal(err)
		}
		c := newCommitter(db)
		done := make(chan error, 8)
		for range 8 {
			go func() {
				done <- c.run(context.Background(), func(queryer) error { return nil })
			}()
		}
		c.close()
		timeout := time.After(10 * time.Second)
		for range 8 {
			select {
			case <-done:
			case <-timeout:
				t.Fatal("a caller is still waiting after close")
			}
		}
		db.Close()
	}
}
