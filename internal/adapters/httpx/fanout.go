package httpx

import (
	"context"
	"sync"

	"github.com/dynabench-go/dynabench"
)

// FanOut runs fn(ctx, i) for every i in [0, n), at most limit at a time, and returns the first
// error any of them returned (the others are then cancelled, and their errors dropped). If ctx ends
// before every item started, the error is a *dynabench.ModelError for ctx's error.
func FanOut(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	if limit < 1 {
		limit = 1
	}
	if n == 1 || limit == 1 {
		for i := range n {
			if err := fn(ctx, i); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		next  = make(chan int)
	)
	for range min(limit, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
	handed := 0
feed:
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		select {
		case next <- i:
			handed++
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil && handed < n {
		// The caller's context ended before every item was handed out.
		return dynabench.AsModelError(ctx.Err())
	}
	return first
}

// Batches splits n inputs into batches of size (the last may be shorter) and runs fn(ctx, lo, hi)
// for each through FanOut, at most limit at a time. Every adapter's PredictBatch is this.
func Batches(ctx context.Context, n, size, limit int, fn func(ctx context.Context, lo, hi int) error) error {
	if size < 1 {
		size = 1
	}
	return FanOut(ctx, (n+size-1)/size, limit, func(ctx context.Context, i int) error {
		lo := i * size
		return fn(ctx, lo, min(lo+size, n))
	})
}
