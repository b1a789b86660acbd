package evaluation

import (
	"math"
	"reflect"
	"testing"
)

var (
	accMeta = MetricMeta{Name: "accuracy", Direction: 1, Weight: 4}
	memMeta = MetricMeta{Name: "memory_utilization", Direction: -1, Offset: 16, Weight: 1}
)

func checkScores(t *testing.T, res DynascoreResult, want map[string]float64) {
	t.Helper()
	if len(res.Models) != len(want) {
		t.Fatalf("models %v, want %d", res.Models, len(want))
	}
	for i, m := range res.Models {
		if !near(res.Scores[i], want[m]) {
			t.Errorf("Dynascore(%s) = %.15g, want %.15g", m, res.Scores[i], want[m])
		}
	}
}

// Three models, accuracy (perf, +1, weight 4) and memory (−1, offset
// 16 GB, weight 1), two datasets with default weights 5, 5 → ω = ½, ½.
//
//	       d1 (acc, mem)  d2 (acc, mem)  X = (acc, mem)
//	A      (0.8, 4)       (0.6, 6)       (0.7, 5)
//	B      (0.9, 7)       (0.7, 7)       (0.8, 7)
//	C      (0.5, 2)       (0.7, 2)       (0.6, 2)
//
// Sorted ascending by raw accuracy: C, A, B.
// Y = (acc, 16 − mem): C (0.6, 14), A (0.7, 11), B (0.8, 9).
// w = (4/5, 1/5) = (0.8, 0.2).
// Deltas: A−C = (0.1, −3), B−A = (0.1, −2); cut-off 1e-4·0.8, both kept.
// AMRS_acc = (0.1/0.1 + 0.1/0.1)/2 = 1; AMRS_mem = (3/0.1 + 2/0.1)/2 = 25.
// A = 0.8·0.7 + 0.2·11/25 = 0.56 + 0.088 = 0.648
// B = 0.8·0.8 + 0.2·9/25  = 0.64 + 0.072 = 0.712
// C = 0.8·0.6 + 0.2·14/25 = 0.48 + 0.112 = 0.592
func TestDynascoreHandWorked(t *testing.T) {
	res, err := Dynascore(Table{
		Models:   []string{"A", "B", "C"},
		Datasets: []string{"d1", "d2"},
		Metrics:  []MetricMeta{accMeta, memMeta},
		Values: [][][]float64{
			{{0.8, 4}, {0.6, 6}},
			{{0.9, 7}, {0.7, 7}},
			{{0.5, 2}, {0.7, 2}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkScores(t, res, map[string]float64{"A": 0.648, "B": 0.712, "C": 0.592})
	if !near(res.AMRS[0], 1) || !near(res.AMRS[1], 25) {
		t.Errorf("AMRS = %v, want [1 25]", res.AMRS)
	}
	if !near(res.Aggregated[0][0], 0.7) || !near(res.Aggregated[0][1], 5) {
		t.Errorf("X[A] = %v, want [0.7 5]", res.Aggregated[0])
	}
}

// Unequal dataset weights 3, 1 → ω = ¾, ¼ (normalised). Metrics accuracy
// and robustness, both +1, DefaultWeights → 4, 1 → w = (0.8, 0.2).
//
//	M1: d1 (0.8, 0.4), d2 (0.4, 0.8) → X = (0.6+0.1, 0.3+0.2)   = (0.7, 0.5)
//	M2: d1 (0.9, 0.6), d2 (0.5, 0.6) → X = (0.675+0.125, 0.45+0.15) = (0.8, 0.6)
//
// Sorted M1, M2; Δ = (0.1, 0.1) → AMRS = (1, 1).
// M1 = 0.8·0.7 + 0.2·0.5 = 0.66; M2 = 0.8·0.8 + 0.2·0.6 = 0.76.
// (Without normalising ω the X would be 4× larger and the scores differ.)
func TestDynascoreDatasetWeights(t *testing.T) {
	w := DefaultWeights("accuracy", []string{"robustness"})
	if !reflect.DeepEqual(w, map[string]float64{"accuracy": 4, "robustness": 1}) {
		t.Fatalf("DefaultWeights = %v", w)
	}
	res, err := Dynascore(Table{
		Models:         []string{"M1", "M2"},
		Datasets:       []string{"d1", "d2"},
		DatasetWeights: []float64{3, 1},
		Metrics: []MetricMeta{
			{Name: "accuracy", Direction: 1, Weight: w["accuracy"]},
			{Name: "robustness", Direction: 1, Weight: w["robustness"]},
		},
		Values: [][][]float64{
			{{0.8, 0.4}, {0.4, 0.8}},
			{{0.9, 0.6}, {0.5, 0.6}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkScores(t, res, map[string]float64{"M1": 0.66, "M2": 0.76})
}

// Models lacking a value (NaN, missing dataset, short row) are dropped;
// the rest are scored as if alone. With the two remaining models:
// A X = (0.7, 5), C X = (0.6, 2) (as in TestDynascoreHandWorked);
// Y: C (0.6, 14), A (0.7, 11); Δ = (0.1, −3) → AMRS_mem = 30.
// A = 0.56 + 0.2·11/30 = 0.56 + 0.07333…; C = 0.48 + 0.2·14/30 = 0.48 + 0.09333….
func TestDynascoreDropsIncomplete(t *testing.T) {
	res, err := Dynascore(Table{
		Models:   []string{"A", "nan", "C", "short", "onedataset"},
		Datasets: []string{"d1", "d2"},
		Metrics:  []MetricMeta{accMeta, memMeta},
		Values: [][][]float64{
			{{0.8, 4}, {0.6, 6}},
			{{0.9, math.NaN()}, {0.7, 7}},
			{{0.5, 2}, {0.7, 2}},
			{{0.9, 7}, {0.7}},
			{{0.9, 7}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Dropped, []string{"nan", "short", "onedataset"}) || !reflect.DeepEqual(res.Index, []int{0, 2}) {
		t.Errorf("Dropped = %v, Index = %v", res.Dropped, res.Index)
	}
	checkScores(t, res, map[string]float64{"A": 0.56 + 0.2*11.0/30, "C": 0.48 + 0.2*14.0/30})
}

// A single model: no consecutive pair, J is empty, every AMRS (perf
// included) is the mean of nothing = NaN, the score is NaN → 0.
func TestDynascoreSingleModel(t *testing.T) {
	res, err := Dynascore(Table{
		Models: []string{"A"}, Datasets: []string{"d"},
		Metrics: []MetricMeta{accMeta, memMeta},
		Values:  [][][]float64{{{0.9, 3}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkScores(t, res, map[string]float64{"A": 0})
	if !math.IsNaN(res.AMRS[0]) || !math.IsNaN(res.AMRS[1]) {
		t.Errorf("AMRS = %v, want NaN NaN", res.AMRS)
	}
}

// Identical perf: ΔY_p = 0, not > 1e-4·0.5, so J is empty, AMRS NaN, and
// Dynaboard shows 0 for every model, whatever the other metrics say.
func TestDynascoreIdenticalPerf(t *testing.T) {
	res, err := Dynascore(Table{
		Models: []string{"A", "B"}, Datasets: []string{"d"},
		Metrics: []MetricMeta{accMeta, memMeta},
		Values:  [][][]float64{{{0.5, 3}}, {{0.5, 9}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkScores(t, res, map[string]float64{"A": 0, "B": 0})
}

// Tiny perf differences are noise: perf 0.5 and 0.50004, Δ = 4e-5 ≤
// 1e-4·0.50004, J empty → 0, 0.
func TestDynascoreNoiseCut(t *testing.T) {
	res, _ := Dynascore(Table{
		Models: []string{"A", "B"}, Datasets: []string{"d"},
		Metrics: []MetricMeta{accMeta, memMeta},
		Values:  [][][]float64{{{0.5, 3}}, {{0.50004, 9}}},
	})
	checkScores(t, res, map[string]float64{"A": 0, "B": 0})
}

// Perf metric with direction −1 (a loss), no offset: Y_p is negative and
// so is the cut-off 1e-4·max_i Y_p.
//
//	M1 X = (loss 0.2, acc 0.9), M2 X = (0.4, 0.7). Sorted ascending by raw
//	loss: M1, M2. Y: M1 (−0.2, 0.9), M2 (−0.4, 0.7). Δ = (−0.2, −0.2).
//	AMRS_loss = |−0.2|/−0.2 = −1, AMRS_acc = |−0.2|/−0.2 = −1; |·| = 1.
//	w = (0.8, 0.2).
//	M1 = 0.8·(−0.2) + 0.2·0.9 = 0.02; M2 = 0.8·(−0.4) + 0.2·0.7 = −0.18.
//
// A third model M0 identical to M1, listed first, sorts just before it
// (stable ties): the pair M0→M1 has ΔY_p = 0, which passes the negative
// cut-off 0 > −2e-5, but both its ratios are 0/0 = NaN and are skipped, so
// nothing changes and M0 = M1 = 0.02.
func TestDynascoreNegativeDirectionPerf(t *testing.T) {
	loss := MetricMeta{Name: "loss", Direction: -1, Weight: 4}
	acc := MetricMeta{Name: "accuracy", Direction: 1, Weight: 1}
	res, err := Dynascore(Table{
		Models: []string{"M0", "M1", "M2"}, Datasets: []string{"d"},
		Metrics: []MetricMeta{loss, acc},
		Values:  [][][]float64{{{0.2, 0.9}}, {{0.2, 0.9}}, {{0.4, 0.7}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkScores(t, res, map[string]float64{"M0": 0.02, "M1": 0.02, "M2": -0.18})
	if !near(res.AMRS[0], -1) || !near(res.AMRS[1], -1) {
		t.Errorf("AMRS = %v, want [-1 -1]", res.AMRS)
	}
}

// A metric identical for every model: its deltas are 0 so AMRS = 0.
// With the value 0 for everyone, 0/0 = NaN and every score becomes 0
// (Dynaboard's comment: "if, for any metric, all models on the
// leaderboard have that metric as 0 ... dynascores will be nan"). With a
// non-zero common value Dynaboard gets Y/0 = +Inf for every model; we
// leave that metric's term out instead, so the scores are the perf term:
// w_p·Y_p with the perf weight normalised against both weights.
func TestDynascoreConstantMetric(t *testing.T) {
	thr := MetricMeta{Name: "examples_per_second", Direction: 1, Weight: 1}
	for _, c := range []struct {
		v    float64
		want float64
	}{{0, 0}, {10, -1}} {
		res, err := Dynascore(Table{
			Models: []string{"A", "B"}, Datasets: []string{"d"},
			Metrics: []MetricMeta{accMeta, thr},
			Values:  [][][]float64{{{0.6, c.v}}, {{0.8, c.v}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.AMRS[1] != 0 {
			t.Errorf("v=%v: AMRS = %v", c.v, res.AMRS)
		}
		wp := accMeta.Weight / (accMeta.Weight + thr.Weight)
		for i, s := range res.Scores {
			want := c.want
			if want < 0 {
				want = wp * []float64{0.6, 0.8}[i]
			}
			if !near(s, want) {
				t.Errorf("v=%v: score %d = %v, want %v", c.v, i, s, want)
			}
		}
	}
}

func TestDynascoreErrors(t *testing.T) {
	base := func() Table {
		return Table{Models: []string{"A"}, Datasets: []string{"d"},
			Metrics: []MetricMeta{accMeta}, Values: [][][]float64{{{1}}}}
	}
	bad := map[string]func(*Table){
		"no metrics":      func(t *Table) { t.Metrics = nil },
		"direction 0":     func(t *Table) { t.Metrics = []MetricMeta{{Name: "a", Weight: 1}} },
		"zero weights":    func(t *Table) { t.Metrics = []MetricMeta{{Name: "a", Direction: 1}} },
		"dup metric":      func(t *Table) { t.Metrics = []MetricMeta{accMeta, accMeta} },
		"no datasets":     func(t *Table) { t.Datasets = nil },
		"dataset weights": func(t *Table) { t.DatasetWeights = []float64{0} },
		"weights length":  func(t *Table) { t.DatasetWeights = []float64{1, 2} },
		"rows":            func(t *Table) { t.Values = nil },
	}
	for name, f := range bad {
		tb := base()
		f(&tb)
		if _, err := Dynascore(tb); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
	if _, err := Dynascore(base()); err != nil {
		t.Errorf("base: %v", err)
	}
}

func TestDynascoreAggregated(t *testing.T) {
	// Same X as TestDynascoreHandWorked.
	s, amrs, err := DynascoreAggregated([][]float64{{0.7, 5}, {0.8, 7}, {0.6, 2}}, []MetricMeta{accMeta, memMeta})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.648, 0.712, 0.592}
	for i := range want {
		if !near(s[i], want[i]) {
			t.Errorf("score %d = %v, want %v", i, s[i], want[i])
		}
	}
	if !near(amrs[1], 25) {
		t.Errorf("AMRS = %v", amrs)
	}
}
