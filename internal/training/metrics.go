package training

import (
	"slices"

	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// Score names in a manifest's held-out scores.
const (
	ScoreAccuracy   = "accuracy"    // share of exact labels (classifier)
	ScoreMacroF1    = "macro_f1"    // mean per-label F1 over the labels in gold or predictions (classifier)
	ScoreExactMatch = "exact_match" // SQuAD exact match after normalisation (QA)
	ScoreF1         = "f1"          // SQuAD token F1 (QA)
)

// labelScores returns accuracy and macro-F1 of predictions against gold labels (same length). Macro-F1
// averages over every label that occurs in either, as scikit-learn does; a prediction of "" (the model
// failed) is wrong and adds no label.
func labelScores(gold, pred []string) map[string]float64 {
	if len(gold) == 0 {
		return nil
	}
	type counts struct{ tp, fp, fn int }
	per := map[string]*counts{}
	get := func(l string) *counts {
		if per[l] == nil {
			per[l] = &counts{}
		}
		return per[l]
	}
	correct := 0
	for i, g := range gold {
		p := pred[i]
		if p == g {
			correct++
			get(g).tp++
			continue
		}
		get(g).fn++
		if p != "" {
			get(p).fp++
		}
	}
	labels := make([]string, 0, len(per))
	for l := range per {
		labels = append(labels, l)
	}
	slices.Sort(labels) // a fixed summation order: the same scores to the last bit
	var f1 float64
	for _, l := range labels {
		c := per[l]
		if c.tp > 0 {
			f1 += 2 * float64(c.tp) / float64(2*c.tp+c.fp+c.fn)
		}
	}
	return map[string]float64{
		ScoreAccuracy: float64(correct) / float64(len(gold)),
		ScoreMacroF1:  f1 / float64(len(labels)),
	}
}

// answerScores returns the SQuAD exact match and F1 of predicted answers against gold answers.
func answerScores(gold, pred []string) map[string]float64 {
	if len(gold) == 0 {
		return nil
	}
	var em, f1 float64
	for i, g := range gold {
		if taskconfig.ExactMatch(pred[i], g) {
			em++
		}
		f1 += taskconfig.SquadF1(pred[i], g)
	}
	n := float64(len(gold))
	return map[string]float64{ScoreExactMatch: em / n, ScoreF1: f1 / n}
}
