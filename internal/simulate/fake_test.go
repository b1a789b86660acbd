package simulate

import (
	"context"
	"fmt"
	"slices"

	"github.com/dynabench-go/dynabench"
)

// fakeLoop is a TEST DOUBLE of the platform, in memory: least-used contexts, a predictor in the loop,
// fooling examples served for validation until `needed` validators agree either way.
type fakeLoop struct {
	task     string
	contexts []Context
	used     []int
	model    dynabench.Predictor
	needed   int
	examples []*fakeExample // id = index + 1
}

type fakeExample struct {
	id       int64
	context  Context
	input    map[string]any
	fooled   bool
	correct  int
	wrong    int
	voters   map[int]bool
	verified bool
}

func (e *fakeExample) resolved(n int) bool { return e.correct >= n || e.wrong >= n }

func newFakeLoop(task string, contexts []Context, model dynabench.Predictor) *fakeLoop {
	return &fakeLoop{task: task, contexts: contexts, used: make([]int, len(contexts)), model: model, needed: 2}
}

func (f *fakeLoop) PickContext(_ context.Context, _ string, _ int) (Context, error) {
	i := 0
	for j := range f.contexts {
		if f.used[j] < f.used[i] {
			i = j
		}
	}
	f.used[i]++
	return f.contexts[i], nil
}

func (f *fakeLoop) modelInput(c Context, input map[string]any) map[string]any {
	if f.task == "nli" {
		return map[string]any{"context": c.Fields["context"], "hypothesis": input["hypothesis"]}
	}
	return map[string]any{"statement": input["statement"]}
}

func (f *fakeLoop) Submit(ctx context.Context, _ string, _ int, c Context, input map[string]any) (bool, int64, error) {
	out, err := f.model.Predict(ctx, f.modelInput(c, input))
	if err != nil {
		return false, 0, err
	}
	ex := &fakeExample{id: int64(len(f.examples) + 1), context: c, input: input, voters: map[int]bool{},
		fooled: out["label"] != input["label"]}
	f.examples = append(f.examples, ex)
	return ex.fooled, ex.id, nil
}

func (f *fakeLoop) NextToValidate(_ context.Context, _ string, v int) (Pending, bool, error) {
	for _, ex := range f.examples {
		if ex.fooled && !ex.resolved(f.needed) && !ex.voters[v] {
			return Pending{ExampleID: ex.id, Input: ex.input}, true, nil
		}
	}
	return Pending{}, false, nil
}

func (f *fakeLoop) Validate(_ context.Context, _ string, v int, id int64, correct bool) error {
	if id < 1 || int(id) > len(f.examples) {
		return fmt.Errorf("no example %d", id)
	}
	ex := f.examples[id-1]
	if ex.voters[v] || ex.resolved(f.needed) {
		return fmt.Errorf("example %d: vote not allowed", id)
	}
	ex.voters[v] = true
	if correct {
		ex.correct++
	} else {
		ex.wrong++
	}
	ex.verified = ex.correct >= f.needed
	return nil
}

func (f *fakeLoop) Verified(_ context.Context, _ string, id int64) (bool, error) {
	return f.examples[id-1].verified, nil
}

// verifiedExamples returns the round's verified examples.
func (f *fakeLoop) verifiedExamples() []*fakeExample {
	return slices.DeleteFunc(slices.Clone(f.examples), func(e *fakeExample) bool { return !e.verified })
}
