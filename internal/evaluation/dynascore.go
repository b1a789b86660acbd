package evaluation

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// DefaultDatasetWeight is Dynabench's dataset weight when a dataset has
// none of its own.
const DefaultDatasetWeight = 5.0

// DeltaCutoffProportion is Dynaboard's delta_cutoff_proportion: a pair of
// consecutive models counts towards the AMRS only when their perf
// difference exceeds this fraction of the largest (oriented) perf value.
const DeltaCutoffProportion = 1e-4

// MetricMeta describes one leaderboard metric, as listed in the
// leaderboard response. Direction is +1 when higher is better and -1 when
// lower is better; Offset is added after orienting (memory: Offset is the
// instance's memory in GB, so Y = memory_gb − memory_used). Weight is the
// weight as given, before normalisation.
type MetricMeta struct {
	Name       string  `json:"name"`
	PrettyName string  `json:"pretty_name"`
	Unit       string  `json:"unit"`
	Direction  int     `json:"direction"`
	Offset     float64 `json:"offset"`
	Weight     float64 `json:"weight"`
}

// DefaultWeights is Dynabench's default metric weighting: 4 for the perf
// metric and 1 for every other metric.
func DefaultWeights(perfName string, others []string) map[string]float64 {
	w := make(map[string]float64, len(others)+1)
	for _, o := range others {
		w[o] = 1
	}
	w[perfName] = 4
	return w
}

// Table is the input of Dynascore: Values[model][dataset][metric], the
// metric values of each model on each dataset. Metrics[0] is the perf
// metric. A NaN value, or a missing (short) row, means "no value".
type Table struct {
	Models   []string
	Datasets []string
	// DatasetWeights parallels Datasets; nil means DefaultDatasetWeight
	// for each. They are normalised to sum 1 before use.
	DatasetWeights []float64
	Metrics        []MetricMeta
	Values         [][][]float64
}

// DynascoreResult is the outcome of Dynascore. Models, Index, Aggregated
// and Scores are parallel and in input order, restricted to the models
// that count; Dropped lists the others, in input order.
type DynascoreResult struct {
	Models  []string
	Index   []int // index of each counted model in Table.Models
	Dropped []string
	// Aggregated[i][k] is X[i,k], the dataset-weighted value of metric k.
	Aggregated [][]float64
	// AMRS[k] is the average marginal rate of substitution of metric k
	// (NaN when no pair of consecutive models passed the noise filter).
	AMRS   []float64
	Scores []float64
}

// normaliseDatasetWeights returns the dataset weights normalised to sum 1.
func normaliseDatasetWeights(w []float64, n int) ([]float64, error) {
	out := make([]float64, n)
	if w == nil {
		for i := range out {
			out[i] = DefaultDatasetWeight
		}
	} else {
		if len(w) != n {
			return nil, fmt.Errorf("evaluation: %d dataset weights for %d datasets", len(w), n)
		}
		copy(out, w)
	}
	sum := 0.0
	for _, x := range out {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("evaluation: invalid dataset weight %v", x)
		}
		sum += x
	}
	if sum == 0 {
		return nil, errors.New("evaluation: dataset weights sum to 0")
	}
	for i := range out {
		out[i] /= sum
	}
	return out, nil
}

// scorer holds the validated metric parameters and scratch space for
// repeated Dynascore computations over the same models and metrics.
type scorer struct {
	m             int
	dir, off, w   []float64 // w normalised
	order         []int
	y             []float64
	amrs, absAMRS []float64
	sums          []float64
	cnts          []int
}

func newScorer(metrics []MetricMeta) (*scorer, error) {
	m := len(metrics)
	if m == 0 {
		return nil, errors.New("evaluation: no metrics")
	}
	s := &scorer{m: m, dir: make([]float64, m), off: make([]float64, m), w: make([]float64, m),
		amrs: make([]float64, m), absAMRS: make([]float64, m), sums: make([]float64, m), cnts: make([]int, m)}
	seen := make(map[string]bool, m)
	sum := 0.0
	for k, mm := range metrics {
		if mm.Name == "" || seen[mm.Name] {
			return nil, fmt.Errorf("evaluation: metric name %q empty or repeated", mm.Name)
		}
		seen[mm.Name] = true
		if mm.Direction != 1 && mm.Direction != -1 {
			return nil, fmt.Errorf("evaluation: metric %q: direction %d, want 1 or -1", mm.Name, mm.Direction)
		}
		if mm.Weight < 0 || math.IsNaN(mm.Weight) || math.IsInf(mm.Weight, 0) {
			return nil, fmt.Errorf("evaluation: metric %q: invalid weight %v", mm.Name, mm.Weight)
		}
		if math.IsNaN(mm.Offset) || math.IsInf(mm.Offset, 0) {
			return nil, fmt.Errorf("evaluation: metric %q: invalid offset %v", mm.Name, mm.Offset)
		}
		s.dir[k], s.off[k], s.w[k] = float64(mm.Direction), mm.Offset, mm.Weight
		sum += mm.Weight
	}
	if sum == 0 {
		// Dynaboard divides by the weight sum and would fail here.
		return nil, errors.New("evaluation: metric weights sum to 0")
	}
	for k := range s.w {
		s.w[k] /= sum
	}
	return s, nil
}

// score computes the Dynascore of n models from x (n×m, row-major, the
// dataset-weighted values X[i,k]) into out (length n), and leaves the AMRS
// in s.amrs. It follows Dynaboard's ScoreModel.dynascore step by step.
func (s *scorer) score(x []float64, out []float64) {
	m, n := s.m, len(out)
	if cap(s.order) < n {
		s.order, s.y = make([]int, n), make([]float64, n*m)
	}
	order, y := s.order[:n], s.y[:n*m]
	// Sort ascending by the raw (un-oriented) perf metric; ties keep input
	// order (Dynaboard uses pandas' default, non-stable, quicksort).
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return x[order[a]*m] < x[order[b]*m] })
	// Orient and shift: Y = u·X + o.
	maxYp := math.Inf(-1)
	for i := 0; i < n; i++ {
		for k := 0; k < m; k++ {
			y[i*m+k] = s.dir[k]*x[i*m+k] + s.off[k]
		}
		if y[i*m] > maxYp {
			maxYp = y[i*m]
		}
	}
	// Noise filter: |ΔY_p| > 1e-4 · max_i Y[i,p] (not max |Y|: with an
	// all-negative perf column the threshold is negative).
	thr := maxYp * DeltaCutoffProportion
	clear(s.sums)
	clear(s.cnts)
	for j := 1; j < n; j++ {
		a, b := order[j-1]*m, order[j]*m
		dp := y[b] - y[a]
		if !(math.Abs(dp) > thr) {
			continue
		}
		for k := 0; k < m; k++ {
			r := math.Abs(y[b+k]-y[a+k]) / dp
			if math.IsNaN(r) { // pandas mean(skipna=True)
				continue
			}
			s.sums[k] += r
			s.cnts[k]++
		}
	}
	for k := 0; k < m; k++ {
		s.amrs[k] = math.NaN()
		if s.cnts[k] > 0 {
			s.amrs[k] = s.sums[k] / float64(s.cnts[k])
		}
		s.absAMRS[k] = math.Abs(s.amrs[k])
	}
	// Dynascore_i = Σ_k w_k · Y[i,k] / |AMRS_k|, NaN → 0. NaN propagates
	// through the sum (Dynaboard adds pandas Series term by term), so a
	// single NaN term zeroes the score. One deliberate departure: a metric
	// with AMRS 0 (equal for every pair of consecutive models that passed
	// the noise cut) cannot be converted into perf units and contributes
	// nothing, where Dynaboard divides a non-zero value by zero and gives
	// every model ±Inf (a zero value still gives 0/0 = NaN, as Dynaboard),
	// which ranks nothing. Bootstrap resamples meet this case often (a few
	// consecutive pairs with equal robustness, say).
	for i := 0; i < n; i++ {
		sc := 0.0
		for k := 0; k < m; k++ {
			if s.absAMRS[k] == 0 && s.w[k] != 0 && y[i*m+k] != 0 && !math.IsNaN(y[i*m+k]) {
				continue
			}
			sc += y[i*m+k] / s.absAMRS[k] * s.w[k]
		}
		if math.IsNaN(sc) {
			sc = 0
		}
		out[i] = sc
	}
}

// DynascoreAggregated computes Dynascores directly from dataset-weighted
// values x[model][metric] (metrics[0] the perf metric). It returns the
// scores and the AMRS per metric.
func DynascoreAggregated(x [][]float64, metrics []MetricMeta) (scores, amrs []float64, err error) {
	s, err := newScorer(metrics)
	if err != nil {
		return nil, nil, err
	}
	flat := make([]float64, 0, len(x)*s.m)
	for i, row := range x {
		if len(row) != s.m {
			return nil, nil, fmt.Errorf("evaluation: model %d has %d values for %d metrics", i, len(row), s.m)
		}
		flat = append(flat, row...)
	}
	scores = make([]float64, len(x))
	s.score(flat, scores)
	return scores, append([]float64(nil), s.amrs...), nil
}

// Dynascore computes Dynaboard's Dynascore (study §5.5):
//
//  1. Only models with a value (not NaN) for every metric on every dataset
//     count; the others are returned in Dropped.
//  2. X[i,k] = Σ_d ω_d·s[i,d,k], with the dataset weights ω normalised to
//     sum 1 (the Dynabench UI normalises before the request; the backend
//     uses them as sent, so normalising here matches what the UI shows).
//  3. Models are sorted ascending by raw X[·,p] (p = Metrics[0]); ties keep
//     input order.
//  4. Y[i,k] = u_k·X[i,k] + o_k.
//  5. Metric weights are normalised to sum 1 (all-zero weights are an
//     error; Dynaboard would divide by zero).
//  6. ΔY between consecutive models in that order.
//  7. J = { j : |ΔY[j,p]| > 1e-4 · max_i Y[i,p] } (signed max, as in
//     Dynaboard).
//  8. AMRS_k = mean over J of |ΔY[j,k]| / ΔY[j,p], skipping NaN; the perf
//     metric goes through the same formula, so |AMRS_p| = 1 whenever J is
//     non-empty. With J empty (a single model, or the same perf for every
//     model) every AMRS, the perf one included, is NaN, so every score is
//     NaN and becomes 0 — that is what Dynaboard shows.
//  9. Dynascore_i = Σ_k w_k·Y[i,k]/|AMRS_k|; NaN → 0.
func Dynascore(t Table) (DynascoreResult, error) {
	s, err := newScorer(t.Metrics)
	if err != nil {
		return DynascoreResult{}, err
	}
	if len(t.Datasets) == 0 {
		return DynascoreResult{}, errors.New("evaluation: no datasets")
	}
	if len(t.Values) != len(t.Models) {
		return DynascoreResult{}, fmt.Errorf("evaluation: %d value rows for %d models", len(t.Values), len(t.Models))
	}
	dw, err := normaliseDatasetWeights(t.DatasetWeights, len(t.Datasets))
	if err != nil {
		return DynascoreResult{}, err
	}
	var res DynascoreResult
	m := s.m
	var flat []float64
	for i, name := range t.Models {
		if !complete(t.Values[i], len(t.Datasets), m) {
			res.Dropped = append(res.Dropped, name)
			continue
		}
		row := make([]float64, m)
		for d, vals := range t.Values[i] {
			for k := 0; k < m; k++ {
				row[k] += dw[d] * vals[k]
			}
		}
		res.Models = append(res.Models, name)
		res.Index = append(res.Index, i)
		res.Aggregated = append(res.Aggregated, row)
		flat = append(flat, row...)
	}
	res.Scores = make([]float64, len(res.Models))
	s.score(flat, res.Scores)
	res.AMRS = append([]float64(nil), s.amrs...)
	return res, nil
}

func complete(v [][]float64, nd, m int) bool {
	if len(v) != nd {
		return false
	}
	for _, vals := range v {
		if len(vals) != m {
			return false
		}
		for _, x := range vals {
			if math.IsNaN(x) {
				return false
			}
		}
	}
	return true
}
