package evaluation

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// ErrEmpty is returned when a metric is asked for over no examples.
var ErrEmpty = errors.New("evaluation: no examples")

func checkLen(gold, pred int) error {
	if gold != pred {
		return fmt.Errorf("evaluation: %d gold values but %d predictions", gold, pred)
	}
	if gold == 0 {
		return ErrEmpty
	}
	return nil
}

// Mean is the arithmetic mean of xs, NaN when xs is empty.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// MeanOver is the mean of scores at the given example indices, NaN when
// idx is empty.
func MeanOver(scores []float64, idx []int) float64 {
	if len(idx) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, i := range idx {
		s += scores[i]
	}
	return s / float64(len(idx))
}

// AccuracyScores is the per-example accuracy: 1 where pred[i] == gold[i]
// (exact string equality), else 0.
func AccuracyScores(gold, pred []string) ([]float64, error) {
	if err := checkLen(len(gold), len(pred)); err != nil {
		return nil, err
	}
	out := make([]float64, len(gold))
	for i := range gold {
		if gold[i] == pred[i] {
			out[i] = 1
		}
	}
	return out, nil
}

// Accuracy is the fraction of examples whose prediction equals the gold
// label.
func Accuracy(gold, pred []string) (float64, error) {
	s, err := AccuracyScores(gold, pred)
	if err != nil {
		return 0, err
	}
	return Mean(s), nil
}

// squadGolds returns the acceptable answers of one example; an example
// with no answer at all is treated as unanswerable, i.e. its only
// acceptable answer is the empty string (SQuAD v2 convention), so an empty
// prediction scores 1 and any other prediction 0.
func squadGolds(answers []string) []string {
	if len(answers) == 0 {
		return []string{""}
	}
	return answers
}

// SquadEMScores is the per-example SQuAD exact match: 1 if the prediction
// equals, after taskconfig.NormalizeAnswer, any of the example's
// acceptable answers, else 0.
func SquadEMScores(golds [][]string, pred []string) ([]float64, error) {
	if err := checkLen(len(golds), len(pred)); err != nil {
		return nil, err
	}
	out := make([]float64, len(pred))
	for i, p := range pred {
		for _, g := range squadGolds(golds[i]) {
			if taskconfig.ExactMatch(p, g) {
				out[i] = 1
				break
			}
		}
	}
	return out, nil
}

// SquadEM is the mean of SquadEMScores.
func SquadEM(golds [][]string, pred []string) (float64, error) {
	s, err := SquadEMScores(golds, pred)
	if err != nil {
		return 0, err
	}
	return Mean(s), nil
}

// SquadF1Scores is the per-example SQuAD token F1: the maximum of
// taskconfig.SquadF1 over the example's acceptable answers.
func SquadF1Scores(golds [][]string, pred []string) ([]float64, error) {
	if err := checkLen(len(golds), len(pred)); err != nil {
		return nil, err
	}
	out := make([]float64, len(pred))
	for i, p := range pred {
		best := 0.0
		for _, g := range squadGolds(golds[i]) {
			if f := taskconfig.SquadF1(p, g); f > best {
				best = f
			}
		}
		out[i] = best
	}
	return out, nil
}

// SquadF1 is the mean of SquadF1Scores.
func SquadF1(golds [][]string, pred []string) (float64, error) {
	s, err := SquadF1Scores(golds, pred)
	if err != nil {
		return 0, err
	}
	return Mean(s), nil
}

// LabelPairs is a classification outcome encoded against a label set, the
// input macro-F1 needs on every bootstrap resample. Gold[i] and Pred[i]
// are indices into the label set, or -1 for a value outside it.
type LabelPairs struct {
	Gold, Pred []int32
	NumLabels  int
}

// EncodeLabels encodes gold and predicted labels against labels.
func EncodeLabels(gold, pred, labels []string) (LabelPairs, error) {
	if err := checkLen(len(gold), len(pred)); err != nil {
		return LabelPairs{}, err
	}
	index := make(map[string]int32, len(labels))
	for i, l := range labels {
		if _, dup := index[l]; dup {
			return LabelPairs{}, fmt.Errorf("evaluation: label %q listed twice", l)
		}
		index[l] = int32(i)
	}
	enc := func(s string) int32 {
		if i, ok := index[s]; ok {
			return i
		}
		return -1
	}
	lp := LabelPairs{Gold: make([]int32, len(gold)), Pred: make([]int32, len(pred)), NumLabels: len(labels)}
	for i := range gold {
		lp.Gold[i], lp.Pred[i] = enc(gold[i]), enc(pred[i])
	}
	return lp, nil
}

// Len is the number of examples.
func (lp LabelPairs) Len() int { return len(lp.Gold) }

// MacroF1 is the unweighted mean over labels of the per-label F1
// 2·TP/(2·TP+FP+FN).
//
// Choices: a label that is neither gold nor predicted for any example
// (TP+FP+FN = 0) is excluded from the mean rather than counted as 0; this
// is what scikit-learn's f1_score(average="macro") without labels= does,
// which is what Dynabench calls, since its label set is the union of the
// gold and predicted values. A gold or predicted value outside the label
// set forms no class of its own: it is still a miss (FN) for an in-set
// gold label, or a false positive for an in-set predicted label. When no
// label of the set occurs at all, the result is 0.
func (lp LabelPairs) MacroF1() float64 {
	return lp.macroF1(nil, make([]float64, 3*lp.NumLabels))
}

// macroF1 computes macro-F1 with example multiplicities counts (nil = 1
// each), using buf (length ≥ 3·NumLabels) as scratch.
func (lp LabelPairs) macroF1(counts []float64, buf []float64) float64 {
	n := lp.NumLabels
	tp, fp, fn := buf[:n], buf[n:2*n], buf[2*n:3*n]
	clear(buf[:3*n])
	for i, g := range lp.Gold {
		c := 1.0
		if counts != nil {
			c = counts[i]
			if c == 0 {
				continue
			}
		}
		p := lp.Pred[i]
		if g == p && g >= 0 {
			tp[g] += c
			continue
		}
		if g >= 0 {
			fn[g] += c
		}
		if p >= 0 {
			fp[p] += c
		}
	}
	sum, k := 0.0, 0
	for l := 0; l < n; l++ {
		d := 2*tp[l] + fp[l] + fn[l]
		if d == 0 {
			continue
		}
		sum += 2 * tp[l] / d
		k++
	}
	if k == 0 {
		return 0
	}
	return sum / float64(k)
}

// MacroF1 is macro-averaged F1 of pred against gold over the given label
// set; see LabelPairs.MacroF1 for the conventions.
func MacroF1(gold, pred, labels []string) (float64, error) {
	lp, err := EncodeLabels(gold, pred, labels)
	if err != nil {
		return 0, err
	}
	return lp.MacroF1(), nil
}

// Subset returns the pairs at the given example indices.
func (lp LabelPairs) Subset(idx []int) LabelPairs {
	out := LabelPairs{Gold: make([]int32, len(idx)), Pred: make([]int32, len(idx)), NumLabels: lp.NumLabels}
	for j, i := range idx {
		out.Gold[j], out.Pred[j] = lp.Gold[i], lp.Pred[i]
	}
	return out
}

// GroupByTag maps every tag to the ascending indices of the examples that
// carry it; tags[i] are example i's tags (an example may have several, or
// none). A tag repeated on one example counts that example once.
func GroupByTag(tags [][]string) map[string][]int {
	out := make(map[string][]int)
	for i, ts := range tags {
		for _, t := range ts {
			idx := out[t]
			if len(idx) > 0 && idx[len(idx)-1] == i {
				continue
			}
			out[t] = append(idx, i)
		}
	}
	return out
}

// ByTag computes metric over each tag's examples (see GroupByTag), e.g.
//
//	ByTag(tags, func(idx []int) float64 { return MeanOver(acc, idx) })
//	ByTag(tags, func(idx []int) float64 { return lp.Subset(idx).MacroF1() })
func ByTag(tags [][]string, metric func(idx []int) float64) map[string]float64 {
	groups := GroupByTag(tags)
	out := make(map[string]float64, len(groups))
	for t, idx := range groups {
		out[t] = metric(idx)
	}
	return out
}

// Tags returns the keys of a per-tag map in sorted order.
func Tags[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
