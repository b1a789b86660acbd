package evaluation

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestPercentile(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5}
	// h = q·(n−1): q=0.025 → 0.1 → 1 + 0.1·1 = 1.1; q=0.975 → 3.9 → 4.9.
	if p := percentile(xs, 0.025); !near(p, 1.1) {
		t.Errorf("p2.5 = %v", p)
	}
	if p := percentile(xs, 0.975); !near(p, 4.9) {
		t.Errorf("p97.5 = %v", p)
	}
	if p := percentile(xs, 1); p != 5 {
		t.Errorf("p100 = %v", p)
	}
}

func TestRankGroups(t *testing.T) {
	rows := []Row{
		{Model: "D", Dynascore: 5.5, DynascoreCI: Interval{4, 7}},
		{Model: "A", Dynascore: 10, DynascoreCI: Interval{8, 12}},
		{Model: "E", Dynascore: 1, DynascoreCI: Interval{0, 3.9}},
		{Model: "B", Dynascore: 9, DynascoreCI: Interval{7, 11}},
		{Model: "C", Dynascore: 6, DynascoreCI: Interval{5, 6.9}},
	}
	RankGroups(rows)
	// A opens group 1 (low 8); B: high 11 ≥ 8 joins, low → 7;
	// C: high 6.9 < 7 opens group at rank 3 (low 5); D: high 7 ≥ 5 joins,
	// low → 4; E: high 3.9 < 4 opens a group at rank 5.
	var got []string
	var ranks []int
	for _, r := range rows {
		got = append(got, r.Model)
		ranks = append(ranks, r.Rank)
	}
	if !reflect.DeepEqual(got, []string{"A", "B", "C", "D", "E"}) || !reflect.DeepEqual(ranks, []int{1, 1, 3, 3, 5}) {
		t.Errorf("order %v ranks %v", got, ranks)
	}
}

// synth builds a leaderboard input: per-example 0/1 accuracy with the
// given skill, a per-example robustness score, macro-F1 label pairs, and a
// fixed memory value.
func synth(nModels, nDatasets, nEx int, seed uint64) LeaderboardInput {
	rng := rand.New(rand.NewPCG(seed, 1))
	in := LeaderboardInput{
		Metrics: []MetricMeta{
			{Name: "accuracy", Direction: 1, Weight: 4},
			{Name: "macro_f1", Direction: 1, Weight: 1},
			{Name: "robustness", Direction: 1, Weight: 1},
			{Name: "memory_utilization", Direction: -1, Offset: 16, Weight: 1},
		},
	}
	for d := 0; d < nDatasets; d++ {
		in.Datasets = append(in.Datasets, "d"+string(rune('a'+d)))
	}
	gold := make([][]int32, nDatasets)
	for d := range gold {
		gold[d] = make([]int32, nEx)
		for e := range gold[d] {
			gold[d][e] = int32(rng.IntN(3))
		}
	}
	for i := 0; i < nModels; i++ {
		in.Models = append(in.Models, "m"+string(rune('A'+i%26))+string(rune('0'+i/26)))
		skill := 0.4 + 0.5*float64(i)/float64(nModels)
		row := make([][]*Sample, nDatasets)
		for d := range row {
			acc, rob := make([]float64, nEx), make([]float64, nEx)
			lp := &LabelPairs{Gold: gold[d], Pred: make([]int32, nEx), NumLabels: 3}
			for e := range acc {
				lp.Pred[e] = int32(rng.IntN(3))
				if rng.Float64() < skill {
					acc[e] = 1
					lp.Pred[e] = gold[d][e]
				}
				rob[e] = rng.Float64()
			}
			row[d] = []*Sample{{Scores: acc}, {Labels: lp}, {Scores: rob}, {Value: 2 + float64(i%5)}}
		}
		in.Samples = append(in.Samples, row)
	}
	return in
}

func TestLeaderboardPointMatchesDynascore(t *testing.T) {
	in := synth(6, 3, 80, 7)
	in.DatasetWeights = []float64{5, 3, 1}
	lb, err := ComputeLeaderboard(in, BootstrapOptions{Resamples: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tb := Table{Models: in.Models, Datasets: in.Datasets, DatasetWeights: in.DatasetWeights, Metrics: in.Metrics}
	for i := range in.Models {
		var vals [][]float64
		for d := range in.Datasets {
			s := in.Samples[i][d]
			vals = append(vals, []float64{Mean(s[0].Scores), s[1].Labels.MacroF1(), Mean(s[2].Scores), s[3].Value})
		}
		tb.Values = append(tb.Values, vals)
	}
	want, err := Dynascore(tb)
	if err != nil {
		t.Fatal(err)
	}
	byModel := map[string]Row{}
	for _, r := range lb.Rows {
		byModel[r.Model] = r
	}
	for i, m := range want.Models {
		r := byModel[m]
		if !near(r.Dynascore, want.Scores[i]) {
			t.Errorf("%s: leaderboard %v, Dynascore %v", m, r.Dynascore, want.Scores[i])
		}
		for k, mm := range in.Metrics {
			v := r.Metrics[mm.Name]
			if !near(v.Value, want.Aggregated[i][k]) {
				t.Errorf("%s %s: %v want %v", m, mm.Name, v.Value, want.Aggregated[i][k])
			}
			if !(v.CI[0] <= v.CI[1]) {
				t.Errorf("%s %s: CI %v", m, mm.Name, v.CI)
			}
		}
		// Fixed values do not vary across resamples.
		if mem := r.Metrics["memory_utilization"]; mem.CI[0] != mem.CI[1] || !near(mem.CI[0], mem.Value) {
			t.Errorf("%s memory CI %v value %v", m, mem.CI, mem.Value)
		}
		if !(r.DynascoreCI[0] <= r.DynascoreCI[1]) {
			t.Errorf("%s: Dynascore CI %v", m, r.DynascoreCI)
		}
	}
	for i := 1; i < len(lb.Rows); i++ {
		if lb.Rows[i].Dynascore > lb.Rows[i-1].Dynascore || lb.Rows[i].Rank < lb.Rows[i-1].Rank {
			t.Errorf("rows not sorted/ranked: %+v", lb.Rows)
		}
	}
	if lb.Rows[0].Rank != 1 {
		t.Errorf("top rank %d", lb.Rows[0].Rank)
	}
}

func TestLeaderboardDeterministic(t *testing.T) {
	in := synth(5, 2, 60, 3)
	a, err := ComputeLeaderboard(in, BootstrapOptions{Resamples: 100, Seed: 42, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ComputeLeaderboard(in, BootstrapOptions{Resamples: 100, Seed: 42, Workers: 4})
	if !reflect.DeepEqual(a, b) {
		t.Error("result depends on Workers")
	}
	c, _ := ComputeLeaderboard(in, BootstrapOptions{Resamples: 100, Seed: 43})
	if reflect.DeepEqual(a.Rows, c.Rows) {
		t.Error("different seeds gave identical intervals")
	}
}

// Constant per-example scores give degenerate intervals at the value.
func TestLeaderboardConstantScores(t *testing.T) {
	ones := []float64{1, 1, 1, 1}
	halves := []float64{0.5, 0.5, 0.5, 0.5}
	in := LeaderboardInput{
		Models: []string{"A", "B", "missing"}, Datasets: []string{"d"},
		Metrics: []MetricMeta{accMeta},
		Samples: [][][]*Sample{{{{Scores: ones}}}, {{{Scores: halves}}}, {{nil}}},
	}
	lb, err := ComputeLeaderboard(in, BootstrapOptions{Resamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lb.Dropped, []string{"missing"}) || len(lb.Rows) != 2 {
		t.Fatalf("dropped %v rows %d", lb.Dropped, len(lb.Rows))
	}
	// One metric, w = 1, AMRS = 1: Dynascore = accuracy.
	for _, r := range lb.Rows {
		want := map[string]float64{"A": 1, "B": 0.5}[r.Model]
		if !near(r.Dynascore, want) || !near(r.DynascoreCI[0], want) || !near(r.DynascoreCI[1], want) {
			t.Errorf("%s: %v %v", r.Model, r.Dynascore, r.DynascoreCI)
		}
	}
	if lb.Rows[0].Model != "A" || lb.Rows[0].Rank != 1 || lb.Rows[1].Rank != 2 {
		t.Errorf("rows %+v", lb.Rows)
	}
}

func TestLeaderboardErrors(t *testing.T) {
	in := LeaderboardInput{
		Models: []string{"A", "B"}, Datasets: []string{"d"},
		Metrics: []MetricMeta{accMeta},
		Samples: [][][]*Sample{{{{Scores: []float64{1, 0}}}}, {{{Scores: []float64{1}}}}},
	}
	if _, err := ComputeLeaderboard(in, BootstrapOptions{Resamples: 10}); err == nil {
		t.Error("unequal example counts: want error")
	}
	in.Samples[1][0][0] = &Sample{Scores: []float64{}}
	if _, err := ComputeLeaderboard(in, BootstrapOptions{Resamples: 10}); err == nil {
		t.Error("empty scores: want error")
	}
}

func TestSampleMissing(t *testing.T) {
	if !(*Sample)(nil).missing() || !(&Sample{Value: math.NaN()}).missing() || (&Sample{}).missing() {
		t.Error("missing()")
	}
}
