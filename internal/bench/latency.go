package bench

import (
	"slices"
	"time"
)

// Summary describes a set of latencies, in milliseconds. Percentiles are exact (nearest rank over
// the sorted samples), not estimated from a histogram.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean_ms"`
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
	P99  float64 `json:"p99_ms"`
	Max  float64 `json:"max_ms"`
}

// Summarize sorts samples in place and describes them; the zero Summary for none.
func Summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, d := range samples {
		sum += d
	}
	return Summary{
		N:    len(samples),
		Mean: ms(sum / time.Duration(len(samples))),
		P50:  ms(Percentile(samples, 50)),
		P90:  ms(Percentile(samples, 90)),
		P99:  ms(Percentile(samples, 99)),
		Max:  ms(samples[len(samples)-1]),
	}
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of sorted samples: the
// smallest sample that at least p% of the samples do not exceed.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p / 100 * float64(len(sorted)))
	if float64(rank) < p/100*float64(len(sorted)) {
		rank++ // ceil, without float rounding surprises for whole ranks
	}
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
