package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/dynabench-go/dynabench"
)

// SQLite has one writer. With synchronous=FULL every COMMIT waits for an fsync of the WAL, so one
// transaction per example caps throughput at the disk's fsync rate and makes queued writers wait in
// line. The group committer runs the transactions that are waiting together: one BEGIN, each caller's
// fn inside its own SAVEPOINT (an error or a panic rolls back that fn's writes only), and one COMMIT
// whose fsync covers them all. Nobody is answered before the COMMIT that holds their writes, so an
// acknowledged write is exactly as durable as before; the batch forms only from transactions that
// are already waiting, so a lone writer is not delayed.
type committer struct {
	db   *sql.DB
	reqs chan *txRequest
	stop chan struct{}
	once sync.Once
	done sync.WaitGroup
	// exited is closed when the loop has returned: a request queued after its last batch is never
	// taken, and its caller must not wait for it.
	exited chan struct{}
}

// maxBatch bounds a batch, and so the work one COMMIT's failure can undo.
const maxBatch = 64

type txRequest struct {
	ctx    context.Context
	fn     func(q queryer) error
	result chan txResult
}

type txResult struct {
	err   error
	panic any
}

func newCommitter(db *sql.DB) *committer {
	c := &committer{db: db, reqs: make(chan *txRequest, 4*maxBatch), stop: make(chan struct{}), exited: make(chan struct{})}
	c.done.Add(1)
	go c.loop()
	return c
}

// close stops the loop after the batch in progress; closing twice is harmless.
func (c *committer) close() {
	c.once.Do(func() { close(c.stop) })
	c.done.Wait()
}

// queued is how many transactions wait for the writer (tests observe blocking with it).
func (c *committer) queued() int { return len(c.reqs) }

// run hands fn to the committer and waits for the outcome. It always waits, even when ctx ends, so
// that fn never runs after its caller has returned.
func (c *committer) run(ctx context.Context, fn func(q queryer) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &txRequest{ctx: ctx, fn: fn, result: make(chan txResult, 1)}
	select {
	case c.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.stop:
		return fmt.Errorf("sqlstore: database closed")
	}
	var res txResult
	select {
	case res = <-r.result:
	case <-c.exited:
		// The loop answers every batch it takes before it returns: either r was answered, or it was
		// queued as the database closed and will never run.
		select {
		case res = <-r.result:
		default:
			return fmt.Errorf("sqlstore: database closed")
		}
	}
	if res.panic != nil {
		panic(res.panic) // the caller's bug, raised in the caller's goroutine
	}
	return res.err
}

func (c *committer) loop() {
	defer c.done.Done()
	defer close(c.exited)
	for {
		var first *txRequest
		select {
		case first = <-c.reqs:
		case <-c.stop:
			return
		}
		batch := []*txRequest{first}
	gather:
		for len(batch) < maxBatch {
			select {
			case r := <-c.reqs:
				batch = append(batch, r)
			default:
				break gather
			}
		}
		c.commit(batch)
	}
}

// commit runs one batch in one transaction and answers every request.
func (c *committer) commit(batch []*txRequest) {
	results := make([]txResult, len(batch))
	defer func() {
		for i, r := range batch {
			r.result <- results[i]
		}
	}()
	bg := context.Background()
	conn, err := c.db.Conn(bg)
	if err != nil {
		fail(results, mapErr("writer", err))
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(bg, "BEGIN IMMEDIATE"); err != nil {
		fail(results, mapErr("begin", err))
		return
	}
	for i, r := range batch {
		var lost error
		results[i], lost = c.step(conn, r)
		if lost != nil {
			// SQLite rolled the whole transaction back on its own (a full disk, an I/O error): every
			// write of the batch so far is gone, so nobody in it may be told otherwise, and the rest
			// must not run outside a transaction.
			conn.ExecContext(bg, "ROLLBACK")
			fail(results, &dynabench.Error{Code: dynabench.EUNAVAILABLE, Message: "the database rolled the write back; try again"})
			return
		}
	}
	if _, err := conn.ExecContext(bg, "COMMIT"); err != nil {
		conn.ExecContext(bg, "ROLLBACK")
		cerr := mapErr("commit", err)
		for i := range results {
			if results[i].err == nil && results[i].panic == nil {
				results[i].err = cerr
			}
		}
	}
}

// step runs one request inside a savepoint of the batch's transaction. lost reports that the
// batch's transaction no longer exists (the savepoint cannot be released or rolled back to).
func (c *committer) step(conn *sql.Conn, r *txRequest) (res txResult, lost error) {
	if err := r.ctx.Err(); err != nil {
		return txResult{err: err}, nil
	}
	bg := context.Background()
	if _, err := conn.ExecContext(bg, "SAVEPOINT tx"); err != nil {
		return txResult{err: mapErr("savepoint", err)}, err
	}
	defer func() {
		if v := recover(); v != nil {
			res = txResult{panic: v}
		}
		if res.err != nil || res.panic != nil {
			if _, err := conn.ExecContext(bg, "ROLLBACK TO tx"); err != nil {
				lost = err
				return
			}
		}
		if _, err := conn.ExecContext(bg, "RELEASE tx"); err != nil {
			lost = err
		}
	}()
	return txResult{err: r.fn(uninterrupted{conn})}, nil
}

// uninterrupted runs the batch's statements without the callers' cancellation: SQLite answers an
// interrupted write inside a transaction by rolling back the whole transaction, which would take the
// other callers' writes with it. A caller that has gone is skipped before its turn instead.
type uninterrupted struct{ c *sql.Conn }

func (u uninterrupted) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return u.c.ExecContext(context.WithoutCancel(ctx), query, args...)
}

func (u uninterrupted) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return u.c.QueryContext(context.WithoutCancel(ctx), query, args...)
}

func (u uninterrupted) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return u.c.QueryRowContext(context.WithoutCancel(ctx), query, args...)
}

func fail(results []txResult, err error) {
	for i := range results {
		results[i].err = err
	}
}
