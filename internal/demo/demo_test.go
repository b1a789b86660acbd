package demo

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/builtin"
)

func loadTasks(t *testing.T) []Task {
	t.Helper()
	tasks, err := Tasks()
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

func TestTasksLoad(t *testing.T) {
	t.Parallel()
	tasks := loadTasks(t)
	var codes []string
	for _, task := range tasks {
		codes = append(codes, task.Code)
	}
	if want := []string{"sentiment", "nli", "qa", "hs"}; !slices.Equal(codes, want) {
		t.Fatalf("codes = %v, want %v", codes, want)
	}
	for _, task := range tasks {
		t.Run(task.Code, func(t *testing.T) {
			if task.Name == "" || task.Description == "" || len(task.Config) == 0 {
				t.Error("missing name, description or config")
			}
			if len(task.Contexts) < 30 {
				t.Errorf("%d contexts, want at least 30", len(task.Contexts))
			}
			for i, c := range task.Contexts {
				if s, _ := c.Context["context"].(string); strings.TrimSpace(s) == "" || c.Tag == "" || c.Metadata == nil {
					t.Errorf("context %d: %+v", i, c)
				}
			}
			min := 300
			if task.Code == "qa" {
				min = 150
			}
			if len(task.Seed) < min {
				t.Errorf("%d seed examples, want at least %d", len(task.Seed), min)
			}
		})
	}
}

// TestConfigs checks the parts of each config the Go code relies on; the config parser's own tests check
// the format.
func TestConfigs(t *testing.T) {
	t.Parallel()
	for _, task := range loadTasks(t) {
		cfg := string(task.Config)
		for _, key := range []string{"goal_message:", "context:", "input:", "output:", "perf_metric:",
			"model_wrong_metric:", "model_output:", "model_evaluation_metric:", "metadata:"} {
			if !strings.Contains(cfg, "\n"+key) {
				t.Errorf("%s: config has no top-level %s", task.Code, key)
			}
		}
		for _, l := range Labels(task.Code) {
			if !strings.Contains(cfg, "\n  - "+l+"\n") {
				t.Errorf("%s: config does not list label %q", task.Code, l)
			}
		}
		if got := strings.Contains(cfg, "\ncontent_warning:"); got != (task.Code == "hs") {
			t.Errorf("%s: content_warning present = %v", task.Code, got)
		}
	}
}

func TestSeedLabels(t *testing.T) {
	t.Parallel()
	for _, task := range loadTasks(t) {
		labels := Labels(task.Code)
		counts := map[string]int{}
		for i, ex := range task.Seed {
			counts[ex.Label]++
			if task.Code == "qa" {
				c, _ := ex.Input["context"].(string)
				q, _ := ex.Input["question"].(string)
				if q == "" || ex.Label == "" || !strings.Contains(c, ex.Label) {
					t.Errorf("qa seed %d: answer %q is not in its context", i, ex.Label)
				}
				continue
			}
			if !slices.Contains(labels, ex.Label) {
				t.Errorf("%s seed %d: label %q not in %v", task.Code, i, ex.Label, labels)
			}
		}
		if task.Code == "qa" {
			continue
		}
		for _, l := range labels { // balanced: no label under 80% of an even share
			if counts[l]*len(labels)*10 < len(task.Seed)*8 {
				t.Errorf("%s: %d examples labelled %q of %d", task.Code, counts[l], l, len(task.Seed))
			}
		}
	}
}

func TestTrainedModelsAnswerValidly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, task := range loadTasks(t) {
		m, name, err := TrainModel(task, 1)
		if err != nil {
			t.Fatal(err)
		}
		if name == "" {
			t.Errorf("%s: empty model name", task.Code)
		}
		inputs := []map[string]any{task.Seed[0].Input, task.Seed[len(task.Seed)-1].Input}
		outs, err := m.PredictBatch(ctx, inputs)
		if err != nil {
			t.Fatal(err)
		}
		for i, out := range outs {
			checkOutput(t, task, inputs[i], out)
		}
	}
}

func checkOutput(t *testing.T, task Task, in, out map[string]any) {
	t.Helper()
	if task.Code == "qa" {
		a, _ := out["answer"].(string)
		conf, ok := out["conf"].(float64)
		if a == "" || !strings.Contains(in["context"].(string), a) || !ok || conf < 0 || conf > 1 {
			t.Errorf("qa: bad output %v", out)
		}
		return
	}
	l, _ := out["label"].(string)
	prob, _ := out["prob"].(map[string]any)
	if !slices.Contains(Labels(task.Code), l) || len(prob) != len(Labels(task.Code)) {
		t.Errorf("%s: bad output %v", task.Code, out)
	}
}

func TestTrainModelUnknownTask(t *testing.T) {
	t.Parallel()
	if _, _, err := TrainModel(Task{Code: "nope"}, 1); err == nil {
		t.Fatal("no error for an unknown task")
	}
}

// split shuffles the seed set with a fixed seed and holds out 20%.
func split(ex []builtin.TrainingExample) (train, test []builtin.TrainingExample) {
	ex = slices.Clone(ex)
	r := rand.New(rand.NewPCG(2024, 7))
	r.Shuffle(len(ex), func(i, j int) { ex[i], ex[j] = ex[j], ex[i] })
	n := len(ex) / 5
	return ex[n:], ex[:n]
}

// TestHeldOut trains each task's model on 80% of its seed set and checks it beats the majority baseline
// on the rest. The numbers are logged: run with -v to see them. These are weak baselines on purpose.
func TestHeldOut(t *testing.T) {
	t.Parallel()
	for _, task := range loadTasks(t) {
		train, test := split(task.Seed)
		held := task
		held.Seed = train
		m, _, err := TrainModel(held, 1)
		if err != nil {
			t.Fatal(err)
		}
		model, baseline := heldOutScores(t, m, train, test, task.Code == "qa")
		metric := "accuracy"
		if task.Code == "qa" {
			metric = "SQuAD F1"
		}
		t.Logf("%-9s held-out %s: model %.3f, majority baseline %.3f (train %d, test %d)",
			task.Code, metric, model, baseline, len(train), len(test))
		if model <= baseline {
			t.Errorf("%s: model %.3f does not beat the majority baseline %.3f", task.Code, model, baseline)
		}
	}
}

// heldOutScores returns the model's mean score on test and that of always answering the most common
// training label: accuracy for labels, SQuAD F1 for answers.
func heldOutScores(t *testing.T, m dynabench.Predictor, train, test []builtin.TrainingExample, qa bool) (float64, float64) {
	t.Helper()
	counts := map[string]int{}
	for _, ex := range train {
		counts[ex.Label]++
	}
	majority := ""
	for l, n := range counts {
		if n > counts[majority] || n == counts[majority] && l < majority {
			majority = l
		}
	}
	var model, base float64
	for _, ex := range test {
		out, err := m.Predict(context.Background(), ex.Input)
		if err != nil {
			t.Fatal(err)
		}
		if qa {
			model += squadF1(out["answer"].(string), ex.Label)
			base += squadF1(majority, ex.Label)
			continue
		}
		if out["label"] == ex.Label {
			model++
		}
		if majority == ex.Label {
			base++
		}
	}
	n := float64(len(test))
	return model / n, base / n
}

// squadF1 is the SQuAD word-overlap F1 after lower-casing and dropping punctuation and articles.
func squadF1(pred, gold string) float64 {
	norm := func(s string) []string {
		s = strings.Map(func(r rune) rune {
			if strings.ContainsRune(".,;:!?'\"()", r) {
				return -1
			}
			return r
		}, strings.ToLower(s))
		return slices.DeleteFunc(strings.Fields(s), func(w string) bool { return w == "a" || w == "an" || w == "the" })
	}
	p, g := norm(pred), norm(gold)
	counts := map[string]int{}
	for _, w := range g {
		counts[w]++
	}
	same := 0
	for _, w := range p {
		if counts[w] > 0 {
			counts[w]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	prec, rec := float64(same)/float64(len(p)), float64(same)/float64(len(g))
	return 2 * prec * rec / (prec + rec)
}
