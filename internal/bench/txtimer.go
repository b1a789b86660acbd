package bench

import (
	"context"
	"sync"
	"time"

	"github.com/dynabench-go/dynabench"
)

// txTimer wraps the server's store to time the rules' transactions: how long each waited to
// begin — on SQLite, for the single write connection — and how long it took from then to its
// commit. The summed durations over the wall time are the average number in progress; with one
// SQLite writer running one transaction at a time, that is the share of time the writer is busy.
type txTimer struct {
	dynabench.Store

	mu         sync.Mutex
	wait, hold []time.Duration
}

// InTx times the outer transaction; nested calls reach the wrapped store through tx directly.
func (s *txTimer) InTx(ctx context.Context, fn func(tx dynabench.Store) error) error {
	start := time.Now()
	var begun time.Time
	err := s.Store.InTx(ctx, func(tx dynabench.Store) error {
		begun = time.Now()
		return fn(tx)
	})
	if begun.IsZero() {
		return err // BEGIN failed
	}
	end := time.Now()
	s.mu.Lock()
	s.wait = append(s.wait, begun.Sub(start))
	s.hold = append(s.hold, end.Sub(begun))
	s.mu.Unlock()
	return err
}

// take returns the samples since the last call and starts afresh.
func (s *txTimer) take() (wait, hold []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wait, hold = s.wait, s.hold
	s.wait, s.hold = nil, nil
	return wait, hold
}

// TxStats summarises the server's write transactions over the measured windows.
type TxStats struct {
	N    int     `json:"n"`
	Held float64 `json:"in_progress"` // summed begin-to-commit time / measured wall time
	Wait Summary `json:"wait"`        // from asking to begin until the transaction ran
	Hold Summary `json:"hold"`        // from the transaction's start to its commit
}

func txStats(wait, hold []time.Duration, wall time.Duration) TxStats {
	var held time.Duration
	for _, d := range hold {
		held += d
	}
	st := TxStats{N: len(hold), Wait: Summarize(wait), Hold: Summarize(hold)}
	if wall > 0 {
		st.Held = held.Seconds() / wall.Seconds()
	}
	return st
}
