package ensemble

import (
	"context"
	"fmt"
	"sync"

	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

// PredictBatch implements dynabench.Predictor. Mean and Vote ask every member for the whole batch
// (a member whose batch fails is skipped for every example); Random picks a member per example and
// sends each member its examples as one batch, falling back to the next member for a batch that fails.
func (e *Ensemble) PredictBatch(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	if len(inputs) == 0 {
		return []map[string]any{}, nil
	}
	if e.mode == Random {
		return e.batchRandom(ctx, inputs)
	}
	outs := make([][]map[string]any, len(e.members))
	errs := make([]error, len(e.members))
	var wg sync.WaitGroup
	for i, m := range e.members {
		wg.Go(func() {
			outs[i], errs[i] = m.Predictor.PredictBatch(ctx, inputs)
			if errs[i] == nil && len(outs[i]) != len(inputs) {
				errs[i] = spec.Invalidf("%d answers for %d inputs", len(outs[i]), len(inputs))
			}
		})
	}
	wg.Wait()
	result := make([]map[string]any, len(inputs))
	for k := range inputs {
		item := make([]map[string]any, len(e.members))
		for i := range e.members {
			if errs[i] == nil {
				item[i] = outs[i][k]
			}
		}
		out, err := e.combine(item, errs)
		if err != nil {
			return nil, spec.Within(fmt.Sprintf("sample %d", k), err)
		}
		result[k] = out
	}
	return result, nil
}

// batchRandom groups the examples by the member picked for each, and runs the groups concurrently.
func (e *Ensemble) batchRandom(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	groups := make([][]int, len(e.members))
	for k := range inputs {
		i := e.pick()
		groups[i] = append(groups[i], k)
	}
	result := make([]map[string]any, len(inputs))
	errs := make([]error, len(e.members))
	var wg sync.WaitGroup
	for start, idx := range groups {
		if len(idx) == 0 {
			continue
		}
		wg.Go(func() { errs[start] = e.randomGroup(ctx, start, idx, inputs, result) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return result, nil
}

// randomGroup answers the examples idx with member start, or the next members in turn.
func (e *Ensemble) randomGroup(ctx context.Context, start int, idx []int, inputs, result []map[string]any) error {
	batch := make([]map[string]any, len(idx))
	for j, k := range idx {
		batch[j] = inputs[k]
	}
	rec := newRecord(e.mode)
	var first error
	for n := range e.members {
		i := (start + n) % len(e.members)
		outs, err := e.members[i].Predictor.PredictBatch(ctx, batch)
		if err == nil {
			err = e.checkAll(outs, len(batch))
		}
		if err != nil {
			first = cmpFirst(first, err)
			e.skipped[i].Add(int64(len(batch)))
			e.skipRecord(i, rec, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		e.answered[i].Add(int64(len(batch)))
		rec.answered = append(rec.answered, e.members[i].Name)
		for j, k := range idx {
			outs[j][RecordField] = rec.value()
			result[k] = outs[j]
		}
		return nil
	}
	return first
}

// checkAll checks a member's batch answer in place.
func (e *Ensemble) checkAll(outs []map[string]any, n int) error {
	if len(outs) != n {
		return spec.Invalidf("%d answers for %d inputs", len(outs), n)
	}
	for j, o := range outs {
		clean, err := e.spec.Check(o)
		if err != nil {
			return spec.Within(fmt.Sprintf("answer %d", j), err)
		}
		outs[j] = clean
	}
	return nil
}
