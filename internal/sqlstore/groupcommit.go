package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
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
	c := &committer{db: db, reqs: make(chan *txRequest, 4*maxBatch), stop: make(chan struct{})}
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
	res := <-r.result
	if res.panic != nil {
		panic(res.panic) // the caller's bug, raised in the caller's goroutine
	}
	return res.err
}

func (c *committer) loop() {
	defer c.done.Done()
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
		results[i] = c.step(conn, r)
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

// step runs one request inside a savepoint of the batch's transaction.
func (c *committer) step(conn *sql.Conn, r *txRequest) (res txResult) {
	if err := r.ctx.Err(); err != nil {
		return txResult{err: err}
	}
	bg := context.Background()
	if _, err := conn.ExecContext(bg, "SAVEPOINT tx"); err != nil {
		return txResult{err: mapErr("savepoint", err)}
	}
	defer func() {
		if v := recover(); v != nil {
			res = txResult{panic: v}
		}
		if res.err != nil || res.panic != nil {
			conn.ExecContext(bg, "ROLLBACK TO tx")
		}
		conn.ExecContext(bg, "RELEASE tx")
	}()
	return txResult{err: r.fn(conn)}
}

func fail(results []txResult, err error) {
	for i := range results {
		results[i].err = err
	}
}
