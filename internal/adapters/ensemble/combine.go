package ensemble

import (
	"github.com/dynabench-go/dynabench/internal/adapters/spec"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// answer is one member's readable answer to one example.
type answer struct {
	member int
	label  string             // classification
	dist   map[string]float64 // classification: normalised prob, or certainty of label
	text   string             // QA
	conf   float64            // QA: conf, or 1 when the member gave none
}

// read checks member i's output against the task.
func (e *Ensemble) read(i int, out map[string]any) (answer, error) {
	clean, err := e.spec.Check(out)
	if err != nil {
		return answer{}, err
	}
	a := answer{member: i}
	if e.spec.Kind == spec.ExtractiveQA {
		a.text, _ = clean[e.spec.AnswerField].(string)
		a.conf = 1
		if c, ok := clean[e.spec.ConfField].(float64); ok && e.spec.ConfField != "" {
			a.conf = c
		}
		return a, nil
	}
	a.label, _ = clean[e.spec.LabelField].(string)
	if p, ok := clean[e.spec.ProbField].(map[string]any); ok && e.spec.ProbField != "" {
		probs := make(map[string]float64, len(p))
		for l, v := range p {
			probs[l], _ = v.(float64)
		}
		a.dist = spec.Normalise(probs)
	}
	if a.dist == nil {
		a.dist = map[string]float64{a.label: 1}
	}
	return a, nil
}

// meanDist averages the members' distributions over the task labels.
func (e *Ensemble) meanDist(answers []answer) map[string]float64 {
	mean := make(map[string]float64, len(e.spec.Labels))
	for _, l := range e.spec.Labels {
		mean[l] = 0
	}
	for _, a := range answers {
		for l, p := range a.dist {
			mean[l] += p / float64(len(answers))
		}
	}
	return mean
}

func (e *Ensemble) combineLabels(answers []answer) map[string]any {
	mean := e.meanDist(answers)
	label := e.spec.Argmax(mean)
	if e.mode == Vote {
		votes := map[string]int{}
		for _, a := range answers {
			votes[a.label]++
		}
		best := -1
		for _, l := range e.spec.Labels { // label order breaks the last ties
			if v := votes[l]; v > best || v == best && v > 0 && mean[l] > mean[label] {
				label, best = l, v
			}
		}
	}
	out := map[string]any{e.spec.LabelField: label}
	if e.spec.ProbField != "" {
		out[e.spec.ProbField] = spec.ProbValue(mean)
	}
	return out
}

func (e *Ensemble) combineQA(answers []answer) map[string]any {
	type group struct {
		text  string
		votes int
		conf  float64
		first int
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, a := range answers {
		key := taskconfig.NormalizeAnswer(a.text)
		g := byKey[key]
		if g == nil {
			g = &group{text: a.text, first: a.member}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.votes++
		g.conf += a.conf
	}
	best := groups[0]
	for _, g := range groups[1:] { // groups are in member order: earlier members win ties
		better := g.conf > best.conf
		if e.mode == Vote {
			better = g.votes > best.votes || g.votes == best.votes && g.conf > best.conf
		}
		if better {
			best = g
		}
	}
	out := map[string]any{e.spec.AnswerField: best.text}
	if e.spec.ConfField != "" {
		out[e.spec.ConfField] = min(best.conf/float64(len(answers)), 1)
	}
	return out
}
