package simulate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/builtin"
	"github.com/dynabench-go/dynabench/internal/demo"
	"github.com/dynabench-go/dynabench/internal/release"
)

func demoTask(t testing.TB, code string) demo.Task {
	t.Helper()
	tasks, err := demo.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range tasks {
		if d.Code == code {
			return d
		}
	}
	t.Fatalf("no demo task %s", code)
	return demo.Task{}
}

func contextsOf(d demo.Task) []Context {
	cs := make([]Context, len(d.Contexts))
	for i, c := range d.Contexts {
		cs[i] = Context{ID: int64(i + 1), Fields: c.Context, Tag: c.Tag}
	}
	return cs
}

func TestWritersAreDeterministicAndLabelled(t *testing.T) {
	t.Parallel()
	for _, task := range []string{"nli", "sentiment"} {
		w, err := NewWriter(task)
		if err != nil {
			t.Fatal(err)
		}
		cs := contextsOf(demoTask(t, task))
		for round := 1; round <= 3; round++ {
			seen := map[string]bool{}
			for i, c := range cs {
				a, err := w.Write(c, round, rand.New(rand.NewPCG(7, uint64(i))))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := w.Write(c, round, rand.New(rand.NewPCG(7, uint64(i))))
				if fmt.Sprint(a) != fmt.Sprint(b) {
					t.Fatalf("%s: same seed, different attempts: %v / %v", task, a, b)
				}
				if !slices.Contains(Labels(task), a.Label) || a.Input["label"] != a.Label {
					t.Fatalf("%s: bad label in %+v", task, a)
				}
				if !slices.Contains(w.Strategies(round), a.Strategy) {
					t.Fatalf("%s round %d used %s", task, round, a.Strategy)
				}
				seen[a.Strategy] = true
			}
			if len(w.Strategies(round)) <= len(w.Strategies(max(1, round-1))) && round > 1 {
				t.Errorf("%s: round %d unlocks no new strategy", task, round)
			}
			if len(seen) < 3 {
				t.Errorf("%s round %d: only %d strategies over 40 contexts", task, round, len(seen))
			}
		}
	}
	if _, err := NewWriter("qa"); err == nil {
		t.Error("a writer for qa")
	}
}

func TestVote(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	if !Vote("a", "a", 0, rng) || Vote("a", "b", 0, rng) {
		t.Fatal("noise-free votes must follow the gold label")
	}
	flips := 0
	for range 10000 {
		if !Vote("a", "a", 0.1, rng) {
			flips++
		}
	}
	if flips < 800 || flips > 1200 {
		t.Fatalf("%d flips at 10%% noise", flips)
	}
}

func trainOn(t testing.TB, task string, ex []builtin.TrainingExample) dynabench.Predictor {
	o := builtin.ClassifierOptions{Labels: Labels(task), Seed: 1}
	if task == "nli" {
		o.PremiseField, o.HypothesisField = "context", "hypothesis"
	} else {
		o.TextFields = []string{"statement"}
	}
	m, err := builtin.TrainClassifier(ex, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRunIsDeterministic(t *testing.T) {
	t.Parallel()
	d := demoTask(t, "sentiment")
	model := trainOn(t, "sentiment", d.Seed)
	plan := Plan{Task: "sentiment", Round: 1, Writers: 3, ExamplesPerWriter: 20, Validators: 3, Seed: 9,
		MislabelRate: 0.1, NoiseRate: 0.05}
	a, err := Run(context.Background(), newFakeLoop("sentiment", contextsOf(d), model), plan)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Run(context.Background(), newFakeLoop("sentiment", contextsOf(d), model), plan)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
	if a.Submitted != 60 || a.VerifiedFooled > a.Fooled || a.Fooled == 0 || a.Validations == 0 {
		t.Fatalf("stats %+v", a)
	}
	sum := 0
	for _, s := range a.ByStrategy {
		sum += s.Submitted
	}
	if sum != a.Submitted {
		t.Fatalf("strategies count %d of %d", sum, a.Submitted)
	}
	if _, err := Run(context.Background(), nil, Plan{Task: "nli"}); err == nil {
		t.Fatal("an empty plan ran")
	}
}

// TestThreeRounds runs the retraining cycle in memory: three rounds per task, the model of round r+1
// trained on the seed set plus the verified examples of rounds ≤ r that fall in their train split, and
// reports vMER per round and every round's model on every round's test split. It checks only what must
// hold; the figures are in the log (go test -v -run ThreeRounds).
func TestThreeRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("trains six models")
	}
	t.Parallel()
	key := release.DeriveKey([]byte("simulation install secret"), "split", "sim")
	ratios := release.Ratios{Train: 0.7, Dev: 0.1, Test: 0.2}
	for _, task := range []string{"nli", "sentiment"} {
		d := demoTask(t, task)
		train := slices.Clone(d.Seed)
		var models []dynabench.Predictor
		var tests [][]builtin.TrainingExample
		var report strings.Builder
		for round := 1; round <= 3; round++ {
			model := trainOn(t, task, train)
			models = append(models, model)
			loop := newFakeLoop(task, contextsOf(d), model)
			st, err := Run(context.Background(), loop, Plan{Task: task, Round: round, Writers: 4,
				ExamplesPerWriter: 50, Validators: 3, Seed: 42, MislabelRate: 0.05, NoiseRate: 0.02})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&report, "round %d: submitted %d, fooled %d (MER %.2f), verified fooled %d (vMER %.2f)\n",
				round, st.Submitted, st.Fooled, st.MER(), st.VerifiedFooled, st.VMER())
			for _, name := range sortedKeys(st.ByStrategy) {
				s := st.ByStrategy[name]
				fmt.Fprintf(&report, "    %-20s %3d written, fooled %3d (%.2f), verified %3d\n", name, s.Submitted,
					s.Fooled, s.Rate(), s.VerifiedFooled)
			}
			var test []builtin.TrainingExample
			for _, ex := range loop.verifiedExamples() {
				te := builtin.TrainingExample{Input: loop.modelInput(ex.context, ex.input), Label: ex.input["label"].(string)}
				switch s, _ := release.Split(fmt.Sprintf("%s-r%d-%d", task, round, ex.id), key, ratios); s {
				case release.Train:
					train = append(train, te)
				case release.Test:
					test = append(test, te)
				}
			}
			tests = append(tests, test)
		}
		fmt.Fprintf(&report, "accuracy of each round's model (rows) on each round's verified test split (columns):\n")
		for mi, m := range models {
			fmt.Fprintf(&report, "    model r%d:", mi+1)
			for ti, test := range tests {
				fmt.Fprintf(&report, "  r%d %.2f (n=%d)", ti+1, accuracy(t, m, test), len(test))
			}
			report.WriteString("\n")
		}
		t.Logf("%s\n%s", task, report.String())
	}
}

func accuracy(t *testing.T, m dynabench.Predictor, ex []builtin.TrainingExample) float64 {
	if len(ex) == 0 {
		return 0
	}
	ok := 0
	for _, e := range ex {
		out, err := m.Predict(context.Background(), e.Input)
		if err != nil {
			t.Fatal(err)
		}
		if out["label"] == e.Label {
			ok++
		}
	}
	return float64(ok) / float64(len(ex))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
