package evaluation

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// DefaultResamples is the default number of bootstrap resamples.
const DefaultResamples = 1000

// Interval is a confidence interval [low, high].
type Interval [2]float64

// Sample is what is known of one metric of one model on one dataset. The
// first of these that is set is used:
//   - Scores: per-example scores; the value is their mean (accuracy, EM,
//     F1, ...) and is resampled with the examples.
//   - Labels: per-example label pairs; the value is their macro-F1,
//     recomputed from the confusion counts of each resample.
//   - Value: a fixed per-dataset value (throughput, memory, ...), the same
//     on every resample.
//
// A nil *Sample, or one with only a NaN Value, is "no value".
type Sample struct {
	Scores []float64
	Labels *LabelPairs
	Value  float64
	// Scale multiplies a Scores or Labels value (0 means 1): 100 reports a
	// proportion in percent, as Dynaboard does, without unpacking 0/1 scores.
	Scale float64
}

func (s *Sample) n() int {
	switch {
	case s.Scores != nil:
		return len(s.Scores)
	case s.Labels != nil:
		return s.Labels.Len()
	}
	return -1
}

func (s *Sample) missing() bool {
	return s == nil || (s.Scores == nil && s.Labels == nil && math.IsNaN(s.Value))
}

// LeaderboardInput is Samples[model][dataset][metric]; Metrics[0] is the
// perf metric. All per-example samples of one dataset must cover the same
// examples in the same order (any model, any metric): the bootstrap is
// paired.
type LeaderboardInput struct {
	Models         []string
	Datasets       []string
	DatasetWeights []float64 // nil: DefaultDatasetWeight each; normalised to sum 1
	Metrics        []MetricMeta
	Samples        [][][]*Sample
}

// BootstrapOptions configures the bootstrap. Zero values mean defaults.
type BootstrapOptions struct {
	Resamples  int     // default DefaultResamples
	Seed       uint64  // PCG seed; resample r uses rand.NewPCG(Seed, r)
	Confidence float64 // default 0.95
	Workers    int     // default runtime.GOMAXPROCS(0)
}

func (o BootstrapOptions) withDefaults() BootstrapOptions {
	if o.Resamples <= 0 {
		o.Resamples = DefaultResamples
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// DatasetWeight is one entry of the leaderboard's dataset list.
type DatasetWeight struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
}

// MetricValue is a dataset-weighted metric value with its interval.
type MetricValue struct {
	Value float64  `json:"value"`
	CI    Interval `json:"ci"`
}

// Row is one leaderboard row.
type Row struct {
	Model       string                 `json:"model"`
	Dynascore   float64                `json:"dynascore"`
	DynascoreCI Interval               `json:"dynascore_ci"`
	Rank        int                    `json:"rank"`
	Metrics     map[string]MetricValue `json:"metrics"`
}

// Leaderboard is a computed leaderboard. Rows are sorted by Dynascore,
// best first. Datasets carry the weights as given (before
// normalisation), like Metrics.
type Leaderboard struct {
	Metrics  []MetricMeta    `json:"metrics"`
	Datasets []DatasetWeight `json:"datasets"`
	Rows     []Row           `json:"rows"`
	AMRS     []float64       `json:"-"`
	Dropped  []string        `json:"-"`
}

// ComputeLeaderboard computes point values and Dynascores (see Dynascore)
// for the models with every value present, then a paired bootstrap: on
// each resample the example indices of each dataset are drawn with
// replacement once and shared by every model and metric, every metric
// value and the Dynascore (AMRS included) are recomputed, and the
// Confidence percentile interval (linear interpolation between order
// statistics, numpy's default) is reported for each. Resamples are
// seeded per index, so results do not depend on Workers.
//
// Ranks are tie groups: rows are sorted by Dynascore descending (ties by
// input order); the first row opens group 1; a row opens a new group when
// its interval's upper bound is below the lowest lower bound of the rows
// in the current group, and otherwise joins it. A row's Rank is 1 + the
// number of rows in earlier groups (competition ranking: 1, 1, 3, ...).
func ComputeLeaderboard(in LeaderboardInput, opt BootstrapOptions) (Leaderboard, error) {
	opt = opt.withDefaults()
	sc, err := newScorer(in.Metrics)
	if err != nil {
		return Leaderboard{}, err
	}
	nd, m := len(in.Datasets), len(in.Metrics)
	if nd == 0 {
		return Leaderboard{}, errors.New("evaluation: no datasets")
	}
	if len(in.Samples) != len(in.Models) {
		return Leaderboard{}, fmt.Errorf("evaluation: %d sample rows for %d models", len(in.Samples), len(in.Models))
	}
	dw, err := normaliseDatasetWeights(in.DatasetWeights, nd)
	if err != nil {
		return Leaderboard{}, err
	}
	lb := Leaderboard{Metrics: slices.Clone(in.Metrics), AMRS: make([]float64, m)}
	for d, name := range in.Datasets {
		w := DefaultDatasetWeight
		if in.DatasetWeights != nil {
			w = in.DatasetWeights[d]
		}
		lb.Datasets = append(lb.Datasets, DatasetWeight{Name: name, Weight: w})
	}

	// Keep complete models; check example counts per dataset.
	var kept []int
	exN := make([]int, nd)
	for d := range exN {
		exN[d] = -1
	}
	for i, name := range in.Models {
		ok := len(in.Samples[i]) == nd
		for d := 0; ok && d < nd; d++ {
			ok = len(in.Samples[i][d]) == m
			for k := 0; ok && k < m; k++ {
				ok = !in.Samples[i][d][k].missing()
			}
		}
		if !ok {
			lb.Dropped = append(lb.Dropped, name)
			continue
		}
		for d := 0; d < nd; d++ {
			for k := 0; k < m; k++ {
				s := in.Samples[i][d][k]
				if s.Scores == nil && s.Labels != nil && len(s.Labels.Pred) != len(s.Labels.Gold) {
					return Leaderboard{}, fmt.Errorf("evaluation: model %q dataset %q: label pairs of unequal length", name, in.Datasets[d])
				}
				n := s.n()
				if n < 0 {
					continue
				}
				if n == 0 {
					return Leaderboard{}, fmt.Errorf("evaluation: model %q dataset %q metric %q: %w", name, in.Datasets[d], in.Metrics[k].Name, ErrEmpty)
				}
				if exN[d] >= 0 && exN[d] != n {
					return Leaderboard{}, fmt.Errorf("evaluation: dataset %q: %d examples for model %q metric %q, %d elsewhere", in.Datasets[d], n, name, in.Metrics[k].Name, exN[d])
				}
				exN[d] = n
			}
		}
		kept = append(kept, i)
	}
	nm := len(kept)

	// Point values, and each sample prepared for resampling:
	// prep[(j·nd+d)·m+k] for kept model j.
	type prepared struct {
		scores []float64   // non-binary per-example scores
		bits   []uint64    // binary per-example scores
		labels *labelMasks // macro-F1
		fixed  float64
		scale  float64 // multiplies a Scores or Labels value
	}
	prep := make([]prepared, nm*nd*m)
	point := make([]float64, nm*m)
	for j, i := range kept {
		for d := 0; d < nd; d++ {
			for k := 0; k < m; k++ {
				s, p := in.Samples[i][d][k], &prep[(j*nd+d)*m+k]
				var v float64
				p.scale = 1
				if s.Scale != 0 {
					p.scale = s.Scale
				}
				switch {
				case s.Scores != nil:
					v = p.scale * sum(s.Scores) / float64(exN[d])
					if b, ok := packBinary(s.Scores); ok {
						p.bits = b
					} else {
						p.scores = s.Scores
					}
				case s.Labels != nil:
					v = p.scale * s.Labels.MacroF1()
					lm := newLabelMasks(s.Labels)
					p.labels = &lm
				default:
					v, p.fixed = s.Value, s.Value
				}
				point[j*m+k] += dw[d] * v
			}
		}
	}
	pointScore := make([]float64, nm)
	sc.score(point, pointScore)
	copy(lb.AMRS, sc.amrs)

	// Bootstrap. bx[r] holds resample r's values (nm×m), bs[r] its scores.
	B := opt.Resamples
	bx := make([]float64, B*nm*m)
	bs := make([]float64, B*nm)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(opt.Workers, B); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wsc, _ := newScorer(in.Metrics)
			counts := make([][]float64, nd)
			icounts := make([][]int32, nd)
			planes := make([][][]uint64, nd)
			for d := range counts {
				counts[d] = make([]float64, max(exN[d], 0))
				icounts[d] = make([]int32, max(exN[d], 0))
			}
			for {
				r := int(next.Add(1) - 1)
				if r >= B {
					return
				}
				// Draw each dataset's example indices once, shared by
				// every model and metric (paired bootstrap).
				rng := rand.New(rand.NewPCG(opt.Seed, uint64(r)))
				for d, c := range icounts {
					clear(c)
					for range exN[d] {
						c[rng.IntN(exN[d])]++
					}
					for e, v := range c {
						counts[d][e] = float64(v)
					}
					planes[d] = countPlanes(c, planes[d])
				}
				x := bx[r*nm*m : (r+1)*nm*m]
				clear(x)
				for j := 0; j < nm; j++ {
					for d := 0; d < nd; d++ {
						n := float64(exN[d])
						for k := 0; k < m; k++ {
							p := &prep[(j*nd+d)*m+k]
							var v float64
							switch {
							case p.bits != nil:
								v = p.scale * float64(popDot(planes[d], p.bits)) / n
							case p.scores != nil:
								v = p.scale * dot(counts[d], p.scores) / n
							case p.labels != nil:
								v = p.scale * p.labels.macroF1(planes[d])
							default:
								v = p.fixed
							}
							x[j*m+k] += dw[d] * v
						}
					}
				}
				wsc.score(x, bs[r*nm:(r+1)*nm])
			}
		}()
	}
	wg.Wait()

	lo, hi := (1-opt.Confidence)/2, 1-(1-opt.Confidence)/2
	col := make([]float64, B)
	interval := func(get func(r int) float64) Interval {
		for r := range col {
			col[r] = get(r)
		}
		slices.Sort(col)
		return Interval{percentile(col, lo), percentile(col, hi)}
	}
	for j, i := range kept {
		row := Row{Model: in.Models[i], Dynascore: pointScore[j], Metrics: make(map[string]MetricValue, m)}
		row.DynascoreCI = interval(func(r int) float64 { return bs[r*nm+j] })
		for k, mm := range in.Metrics {
			row.Metrics[mm.Name] = MetricValue{
				Value: point[j*m+k],
				CI:    interval(func(r int) float64 { return bx[(r*nm+j)*m+k] }),
			}
		}
		lb.Rows = append(lb.Rows, row)
	}
	RankGroups(lb.Rows)
	return lb, nil
}

// RankGroups sorts rows by Dynascore descending (stable) and sets Rank as
// documented on ComputeLeaderboard.
func RankGroups(rows []Row) {
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].Dynascore > rows[b].Dynascore })
	groupLow, rank := math.Inf(1), 0
	for i := range rows {
		if i == 0 || rows[i].DynascoreCI[1] < groupLow {
			rank, groupLow = i+1, rows[i].DynascoreCI[0]
		} else {
			groupLow = min(groupLow, rows[i].DynascoreCI[0])
		}
		rows[i].Rank = rank
	}
}

// percentile is the q-quantile of sorted xs with linear interpolation
// between order statistics (numpy's default "linear" method).
func percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	f := h - float64(lo)
	if f == 0 {
		return sorted[lo]
	}
	return sorted[lo] + f*(sorted[lo+1]-sorted[lo])
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// dot is Σ a[i]·b[i], unrolled by four.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Keep returns the input restricted to the metrics at the given indices (the perf metric, index 0,
// must be among them), in that order.
func (in LeaderboardInput) Keep(metrics []int) LeaderboardInput {
	out := in
	out.Metrics = make([]MetricMeta, len(metrics))
	for j, k := range metrics {
		out.Metrics[j] = in.Metrics[k]
	}
	out.Samples = make([][][]*Sample, len(in.Samples))
	for i, perModel := range in.Samples {
		out.Samples[i] = make([][]*Sample, len(perModel))
		for d, perDataset := range perModel {
			out.Samples[i][d] = make([]*Sample, len(metrics))
			for j, k := range metrics {
				out.Samples[i][d][j] = perDataset[k]
			}
		}
	}
	return out
}
