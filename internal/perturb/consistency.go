package perturb

import (
	"math"

	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// Consistency is the delta score (the "robustness" or "fairness" metric)
// as a fraction in [0, 1]: the share of perturbed inputs on which the
// model's prediction pertPreds[i] agrees, under agree, with its own
// prediction origPreds[i] on the original input. Pair i is one perturbed
// example and the original it points to (Derived.OriginalUID); an original
// with several perturbed copies is repeated. Dynabench shows the value
// times 100.
//
// This is the per-copy share the product spec names. Dynabench's own code
// (get_unperturbed_percent) averages per original first; GroupedConsistency
// computes that. The two agree when each original has one perturbed copy
// per run, which is the case when each perturbation is scored as its own
// run; they differ when all copies of one kind are pooled.
//
// With no pairs, or slices of different lengths, the score is undefined and
// Consistency returns NaN.
func Consistency(origPreds, pertPreds []string, agree func(a, b string) bool) float64 {
	return ConsistencyScore(origPreds, pertPreds, AgreeScore(agree))
}

// ConsistencyScore is Consistency for graded metrics: the mean of
// score(origPreds[i], pertPreds[i]). NaN when undefined, as Consistency.
func ConsistencyScore(origPreds, pertPreds []string, score func(orig, pert string) float64) float64 {
	if len(origPreds) == 0 || len(origPreds) != len(pertPreds) {
		return math.NaN()
	}
	sum := 0.0
	for i := range origPreds {
		sum += score(origPreds[i], pertPreds[i])
	}
	return sum / float64(len(origPreds))
}

// ExactAgree is the agreement for label tasks (accuracy as the perf
// metric): the two predictions are the same label.
func ExactAgree(a, b string) bool { return a == b }

// LabelConsistency is Consistency with ExactAgree.
func LabelConsistency(origPreds, pertPreds []string) float64 {
	return Consistency(origPreds, pertPreds, ExactAgree)
}

// QAAgreement is the agreement for extractive QA with squad_f1 as the perf
// metric: the SQuAD token F1 of the perturbed prediction against the
// original prediction taken as the reference. It is graded, not
// thresholded, which is what Dynabench does (it applies the perf metric
// itself to the pair).
func QAAgreement(orig, pert string) float64 { return taskconfig.SquadF1(pert, orig) }

// QAConsistency is ConsistencyScore with QAAgreement: the mean F1 between
// each perturbed prediction and the original prediction.
func QAConsistency(origPreds, pertPreds []string) float64 {
	return ConsistencyScore(origPreds, pertPreds, QAAgreement)
}

// GroupedConsistency is exactly Dynabench's get_unperturbed_percent (as a
// fraction): pairs are grouped by original (originals[i] is the
// OriginalUID of pair i), the mean score is taken within each group, and
// the result is the mean over groups, so an original with many perturbed
// copies weighs as much as one with a single copy. For one copy per
// original it equals ConsistencyScore. NaN when undefined.
func GroupedConsistency(originals, origPreds, pertPreds []string, score func(orig, pert string) float64) float64 {
	if len(origPreds) == 0 || len(origPreds) != len(pertPreds) || len(originals) != len(origPreds) {
		return math.NaN()
	}
	type acc struct {
		sum float64
		n   int
	}
	groups := map[string]*acc{}
	var order []string
	for i, id := range originals {
		g, ok := groups[id]
		if !ok {
			g = &acc{}
			groups[id] = g
			order = append(order, id)
		}
		g.sum += score(origPreds[i], pertPreds[i])
		g.n++
	}
	total := 0.0
	for _, id := range order { // fixed order: a deterministic float sum
		g := groups[id]
		total += g.sum / float64(g.n)
	}
	return total / float64(len(order))
}

// AgreeScore turns an agreement predicate into a 0/1 score.
func AgreeScore(agree func(a, b string) bool) func(a, b string) float64 {
	return func(a, b string) float64 {
		if agree(a, b) {
			return 1
		}
		return 0
	}
}

// Pairs lines up predictions for the consistency functions: for every
// derived example that has a prediction in pert (keyed by Derived.UID) and
// whose original has one in orig (keyed by OriginalUID), it appends the
// original's uid, its prediction and the perturbed prediction. Derived
// examples without both predictions are skipped and counted in missing.
func Pairs(derived []Derived, orig, pert map[string]string) (originals, origPreds, pertPreds []string, missing int) {
	for _, d := range derived {
		o, ok1 := orig[d.OriginalUID]
		p, ok2 := pert[d.UID]
		if !ok1 || !ok2 {
			missing++
			continue
		}
		originals = append(originals, d.OriginalUID)
		origPreds = append(origPreds, o)
		pertPreds = append(pertPreds, p)
	}
	return originals, origPreds, pertPreds, missing
}
