package evaluation

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// PairedResult is a paired comparison of model A against model B.
type PairedResult struct {
	Diff float64  // mean(a) − mean(b)
	CI   Interval // percentile interval of the resampled difference
	P    float64  // two-sided bootstrap p-value
}

// PairedBootstrap compares the mean of two per-example score vectors over
// the same examples. Each resample draws example indices with replacement
// (rand.NewPCG(seed, r) for resample r; resamples ≤ 0 means
// DefaultResamples) and applies them to both vectors. The p-value tests
// "no difference" by the shift method: with δ the observed difference and
// δ*_r the resampled ones, P = (1 + #{r : |δ*_r − δ| ≥ |δ|}) / (B + 1).
// CI is the 95% percentile interval of δ*.
func PairedBootstrap(a, b []float64, resamples int, seed uint64) (PairedResult, error) {
	if err := checkLen(len(a), len(b)); err != nil {
		return PairedResult{}, err
	}
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	n := len(a)
	diff := make([]float64, n)
	for i := range a {
		diff[i] = a[i] - b[i]
	}
	delta := Mean(diff)
	ds := make([]float64, resamples)
	extreme := 0
	for r := range ds {
		rng := rand.New(rand.NewPCG(seed, uint64(r)))
		s := 0.0
		for range n {
			s += diff[rng.IntN(n)]
		}
		ds[r] = s / float64(n)
		if math.Abs(ds[r]-delta) >= math.Abs(delta) {
			extreme++
		}
	}
	slices.Sort(ds)
	return PairedResult{
		Diff: delta,
		CI:   Interval{percentile(ds, 0.025), percentile(ds, 0.975)},
		P:    float64(1+extreme) / float64(resamples+1),
	}, nil
}

// McNemarResult is McNemar's exact test on paired correctness.
type McNemarResult struct {
	B int     // examples A gets right and B gets wrong
	C int     // examples A gets wrong and B gets right
	P float64 // two-sided exact p-value
}

// McNemar runs McNemar's exact test on per-example correctness of two
// models over the same examples.
func McNemar(aCorrect, bCorrect []bool) (McNemarResult, error) {
	if len(aCorrect) != len(bCorrect) {
		return McNemarResult{}, fmt.Errorf("evaluation: %d vs %d examples", len(aCorrect), len(bCorrect))
	}
	var r McNemarResult
	for i := range aCorrect {
		switch {
		case aCorrect[i] && !bCorrect[i]:
			r.B++
		case !aCorrect[i] && bCorrect[i]:
			r.C++
		}
	}
	r.P, _ = McNemarExact(r.B, r.C)
	return r, nil
}

// McNemarExact is the two-sided exact (binomial) McNemar p-value for b and
// c discordant pairs: min(1, 2·Σ_{k ≤ min(b,c)} C(b+c, k) / 2^(b+c)).
// With no discordant pair it is 1.
func McNemarExact(b, c int) (float64, error) {
	if b < 0 || c < 0 {
		return 0, errors.New("evaluation: negative count")
	}
	n, k := b+c, min(b, c)
	if n == 0 {
		return 1, nil
	}
	// Sum the binomial terms in log space to avoid overflow for large n.
	lgN, _ := math.Lgamma(float64(n + 1))
	p := 0.0
	for i := 0; i <= k; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		bb, _ := math.Lgamma(float64(n - i + 1))
		p += math.Exp(lgN - a - bb - float64(n)*math.Ln2)
	}
	return min(1, 2*p), nil
}
