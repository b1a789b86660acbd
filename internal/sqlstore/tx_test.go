package sqlstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/sqlstore"
)

func TestInTx(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		boom := errors.New("boom")
		newUser := func(name string) *dynabench.User {
			return &dynabench.User{Username: name, Email: name + "@example.org", PasswordHash: "h"}
		}
		exists := func(t *testing.T, name string) bool {
			t.Helper()
			_, err := s.FindUserByUsername(ctx, name)
			if err != nil && !dynabench.IsCode(err, dynabench.ENOTFOUND) {
				t.Fatal(err)
			}
			return err == nil
		}

		t.Run("commit", func(t *testing.T) {
			tk := &dynabench.Task{Code: "committed", Name: "x"}
			must(t, s.InTx(ctx, func(tx dynabench.Store) error {
				u := newUser("committed")
				if err := tx.CreateUser(ctx, u); err != nil {
					return err
				}
				// The transaction reads its own writes; others do not see them before commit.
				if _, err := tx.FindUserByID(ctx, u.ID); err != nil {
					return err
				}
				if exists(t, "committed") {
					t.Error("uncommitted user visible outside the transaction")
				}
				if err := tx.CreateTask(ctx, tk); err != nil {
					return err
				}
				return tx.AddTaskOwner(ctx, tk.ID, u.ID)
			}))
			u, err := s.FindUserByUsername(ctx, "committed")
			must(t, err)
			ok, err := s.IsTaskOwner(ctx, tk.ID, u.ID)
			must(t, err)
			if !ok {
				t.Fatal("owner row not committed")
			}
		})

		t.Run("rollback on error", func(t *testing.T) {
			before, err := s.CountUsers(ctx)
			must(t, err)
			err = s.InTx(ctx, func(tx dynabench.Store) error {
				if err := tx.CreateUser(ctx, newUser("rolled")); err != nil {
					return err
				}
				if err := tx.CreateTask(ctx, &dynabench.Task{Code: "rolled", Name: "x"}); err != nil {
					return err
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("InTx returned %v, want fn's error", err)
			}
			if exists(t, "rolled") {
				t.Fatal("user written by a rolled-back transaction")
			}
			_, err = s.FindTaskByCode(ctx, "rolled")
			wantCode(t, err, dynabench.ENOTFOUND)
			after, err := s.CountUsers(ctx)
			must(t, err)
			if after != before {
				t.Fatalf("users %d → %d", before, after)
			}
		})

		t.Run("rollback on a store error", func(t *testing.T) {
			err := s.InTx(ctx, func(tx dynabench.Store) error {
				if err := tx.CreateUser(ctx, newUser("first")); err != nil {
					return err
				}
				return tx.CreateUser(ctx, newUser("FIRST"))
			})
			wantCode(t, err, dynabench.ECONFLICT)
			if exists(t, "first") {
				t.Fatal("user written by a rolled-back transaction")
			}
		})

		t.Run("nested calls join", func(t *testing.T) {
			tk := e.task(t)
			err := s.InTx(ctx, func(tx dynabench.Store) error {
				if err := tx.CreateUser(ctx, newUser("outer")); err != nil {
					return err
				}
				err := tx.InTx(ctx, func(inner dynabench.Store) error {
					if _, err := inner.FindUserByUsername(ctx, "outer"); err != nil {
						return err // the inner call sees the outer's writes: one transaction
					}
					return inner.CreateUser(ctx, newUser("inner"))
				})
				if err != nil {
					return err
				}
				if _, err := tx.FindUserByUsername(ctx, "inner"); err != nil {
					return err
				}
				// Methods that open a transaction of their own join this one too.
				if err := tx.CreateRound(ctx, &dynabench.Round{TaskID: tk.ID, Number: 1}); err != nil {
					return err
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("InTx returned %v", err)
			}
			if exists(t, "outer") || exists(t, "inner") {
				t.Fatal("the outer rollback did not undo both levels")
			}
			rounds, err := s.FindRounds(ctx, tk.ID)
			must(t, err)
			got, err := s.FindTaskByID(ctx, tk.ID)
			must(t, err)
			if len(rounds) != 0 || got.CurrentRound != 0 {
				t.Fatalf("rolled-back CreateRound left %d rounds, current round %d", len(rounds), got.CurrentRound)
			}
			// An inner error reaches the outer fn unchanged.
			err = s.InTx(ctx, func(tx dynabench.Store) error {
				return tx.InTx(ctx, func(dynabench.Store) error { return boom })
			})
			if !errors.Is(err, boom) {
				t.Fatalf("inner error became %v", err)
			}
		})

		t.Run("panic releases the connection", func(t *testing.T) {
			func() {
				defer func() {
					if recover() == nil {
						t.Error("panic swallowed")
					}
				}()
				s.InTx(ctx, func(tx dynabench.Store) error {
					if err := tx.CreateUser(ctx, newUser("panicked")); err != nil {
						return err
					}
					panic("handler bug")
				})
			}()
			// On SQLite the single writer must be free again, or this waits forever.
			tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			must(t, s.InTx(tctx, func(tx dynabench.Store) error { return tx.CreateUser(tctx, newUser("after-panic")) }))
			if exists(t, "panicked") {
				t.Fatal("the panicking transaction was committed")
			}
		})

		t.Run("cancelled context", func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			called := false
			err := s.InTx(cctx, func(dynabench.Store) error { called = true; return nil })
			if !errors.Is(err, context.Canceled) || called {
				t.Fatalf("InTx on a cancelled context: %v, fn called %v", err, called)
			}
		})
	})
}

// TestLockExampleSerialises: two transactions lock the same example; the second must wait for the
// first to commit and then read what it wrote. "Waiting" is observed, not timed: on PostgreSQL the
// second backend shows up in pg_blocking_pids of the first; on SQLite the second transaction queues
// in the group committer for the single writer.
func TestLockExampleSerialises(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		u := e.user(t)
		tk := e.task(t)
		c := e.contexts(t, e.round(t, tk), 1, "")[0]
		ex := e.submit(t, c, u, boolp(true))

		locked := make(chan int64, 1) // the first holder's backend pid (0 on SQLite)
		release := make(chan struct{})
		firstDone := make(chan error, 1)
		go func() {
			firstDone <- e.s.InTx(ctx, func(tx dynabench.Store) error {
				x, err := tx.LockExample(ctx, ex.ID)
				if err != nil {
					return err
				}
				var pid int64
				if e.engine == sqlstore.Postgres {
					if pid, err = tx.(*sqlstore.Store).BackendPID(ctx); err != nil {
						return err
					}
				}
				locked <- pid
				<-release
				x.FlagReason = "first"
				return tx.UpdateExample(ctx, x)
			})
		}()
		var pid int64
		select {
		case pid = <-locked:
		case err := <-firstDone:
			t.Fatalf("first transaction ended early: %v", err)
		}
		// Plain reads do not wait for the lock, and see the committed state.
		got, err := e.s.FindExampleByID(ctx, ex.ID)
		must(t, err)
		if got.FlagReason != "" {
			t.Fatalf("read an uncommitted write: %q", got.FlagReason)
		}

		waitsBefore := e.db.WriterStats().WaitCount
		seen := make(chan string, 1)
		secondDone := make(chan error, 1)
		go func() {
			secondDone <- e.s.InTx(ctx, func(tx dynabench.Store) error {
				x, err := tx.LockExample(ctx, ex.ID)
				if err != nil {
					return err
				}
				seen <- x.FlagReason
				x.FlagReason += "+second"
				return tx.UpdateExample(ctx, x)
			})
		}()
		blocked := func() bool {
			if e.engine == sqlstore.Postgres {
				return e.count(t, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, pid) > 0
			}
			// SQLite: queued behind the first in the group committer (or, without one, for the writer).
			return e.db.QueuedTx() > 0 || e.db.WriterStats().WaitCount > waitsBefore
		}
		for deadline := time.Now().Add(20 * time.Second); !blocked(); time.Sleep(2 * time.Millisecond) {
			select {
			case r := <-seen:
				t.Fatalf("second locker read %q while the first held the lock", r)
			case err := <-secondDone:
				t.Fatalf("second transaction ended while the first held the lock: %v", err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("the second locker never blocked")
			}
		}
		close(release)
		must(t, <-firstDone)
		must(t, <-secondDone)
		if r := <-seen; r != "first" {
			t.Fatalf("second locker read %q, want the first's committed write", r)
		}
		got, err = e.s.FindExampleByID(ctx, ex.ID)
		must(t, err)
		if got.FlagReason != "first+second" {
			t.Fatalf("final flag reason %q, want first+second", got.FlagReason)
		}
	})
}

// TestConcurrentSubmits runs the example-submit write path (daily cap, example row, counters) from
// 8 goroutines, 50 times each, while readers poll: every counter must come out exact, the cap must
// hold under the race, and no SQLITE_BUSY (or any other error) may surface.
func TestConcurrentSubmits(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		const workers, each, capPerUser = 8, 50, 150 // two users, 4 workers × 50 = 200 attempts each
		users := []*dynabench.User{e.user(t), e.user(t)}
		tk := e.task(t)
		r := e.round(t, tk)
		cs := e.contexts(t, r, 2, "")
		const day = "2026-03-14"

		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			limited   = map[int64]int{}
			readsDone = make(chan struct{})
			readerWG  sync.WaitGroup
			errs      = make(chan error, workers+2)
		)
		for range 2 { // bounded, so that readers do not starve the writers of the two CPUs CI may have
			readerWG.Go(func() {
				for range 100 {
					select {
					case <-readsDone:
						return
					default:
					}
					if _, err := e.s.FindRoundByID(ctx, r.ID); err != nil {
						errs <- err
						return
					}
					if _, err := e.s.PickContext(ctx, dynabench.ContextQuery{TaskID: tk.ID, RoundID: r.ID}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		for w := range workers {
			wg.Go(func() {
				u := users[w%2]
				for i := range each {
					ex := &dynabench.Example{TaskID: tk.ID, RoundID: r.ID, ContextID: cs[i%2].ID, UserID: u.ID,
						Input: map[string]any{"i": i}, ModelWrong: boolp(i%2 == 0)}
					err := e.s.InTx(ctx, func(tx dynabench.Store) error {
						if err := tx.BumpDailyCount(ctx, u.ID, tk.ID, day, capPerUser); err != nil {
							return err
						}
						if err := tx.CreateExample(ctx, ex); err != nil {
							return err
						}
						return tx.ApplyStats(ctx, ex, dynabench.Contribution(ex))
					})
					if dynabench.IsCode(err, dynabench.ERATELIMIT) {
						mu.Lock()
						limited[u.ID]++
						mu.Unlock()
					} else if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(readsDone)
		readerWG.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if t.Failed() {
			return
		}

		const accepted = 2 * capPerUser
		for _, u := range users {
			if limited[u.ID] != workers/2*each-capPerUser {
				t.Errorf("user %d: %d refused, want %d", u.ID, limited[u.ID], workers/2*each-capPerUser)
			}
			if n := e.count(t, `SELECT n FROM daily_counts WHERE user_id = $1 AND task_id = $2 AND day = $3`, u.ID, tk.ID, day); n != capPerUser {
				t.Errorf("user %d: daily count %d, want the cap %d", u.ID, n, capPerUser)
			}
		}
		got, err := e.s.FindRoundByID(ctx, r.ID)
		must(t, err)
		if got.Stats.Collected != accepted || got.Stats.Fooled != e.count(t, `SELECT count(*) FROM examples WHERE model_wrong = TRUE`) {
			t.Errorf("round stats %+v, want %d collected", got.Stats, accepted)
		}
		if n := e.count(t, `SELECT count(*) FROM examples`); n != accepted {
			t.Errorf("%d example rows, want %d", n, accepted)
		}
		var used int64
		for _, c := range cs {
			cx, err := e.s.FindContextByID(ctx, c.ID)
			must(t, err)
			used += cx.TotalUsed
		}
		if used != accepted {
			t.Errorf("contexts used %d times in total, want %d", used, accepted)
		}
		stats, err := e.s.AnnotatorStats(ctx, tk.ID, r.ID, 10)
		must(t, err)
		if len(stats) != 2 || stats[0].Submitted != capPerUser || stats[1].Submitted != capPerUser {
			t.Errorf("annotators %+v, want %d submitted each", stats, capPerUser)
		}
		e.noDrift(t)
	})
}
