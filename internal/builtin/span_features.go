package builtin

import "math/bits"

// Feature namespaces of the span model.
const (
	nsLen uint64 = iota + 1
	nsQLen
	nsProp
	nsQProp
	nsSentShare
	nsSentRank
	nsSentPos
	nsWindow
	nsDist
	nsInQuestion
	nsPrev
	nsQPrev
	nsNext
	nsQNext
	nsFocus
)

// Span properties, aggregated over a candidate's tokens and neighbours.
const (
	pAllCap uint64 = iota
	pFirstCap
	pNoCap
	pDigit
	pAllNumber
	pYear
	pMonth
	pEndsUnit
	pSentStart
	pSentEnd
	pCutsName // a capitalised neighbour: the span is part of a longer name
	pNextNumber
	pNumProps
)

var boundaryWord = hashString("<boundary>")

// features calls add with every (key, value) feature of the candidate span i..j.
func (p *passage) features(i, j int, add func(key uint64, val float64)) {
	qt := p.q.qtype
	n := uint64(j - i + 1)
	add(mix(nsLen, n), 1)
	add(mix(nsQLen, qt, n), 1)
	for prop := range pNumProps {
		if p.hasProp(i, j, prop) {
			add(mix(nsProp, prop), 1)
			add(mix(nsQProp, qt, prop), 1)
		}
	}
	p.overlapFeatures(i, j, add)
	prev, next := boundaryWord, boundaryWord
	if i > 0 && p.toks[i-1].sent == p.toks[i].sent {
		prev = p.toks[i-1].word
	}
	if j+1 < len(p.toks) && p.toks[j+1].sent == p.toks[j].sent {
		next = p.toks[j+1].word
	}
	add(mix(nsPrev, prev), 1)
	add(mix(nsQPrev, qt, prev), 1)
	add(mix(nsNext, next), 1)
	add(mix(nsQNext, qt, next), 1)
	p.focusFeatures(i, j, add)
}

// overlapFeatures says how close the span sits to the question's words: in its sentence, in windows
// around it, and in the span itself (an answer rarely repeats the question).
func (p *passage) overlapFeatures(i, j int, add func(key uint64, val float64)) {
	nq := float64(max(len(p.q.content), 1))
	s := p.toks[i].sent
	add(mix(nsSentShare), float64(p.sentMatch[s])/nq)
	add(mix(nsSentRank, uint64(min(p.sentRank[s], 2))), 1)
	add(mix(nsSentPos, uint64(min(s, 3))), 1)
	for _, k := range []int{3, 8} {
		add(mix(nsWindow, uint64(k)), float64(bits.OnesCount64(p.windowMask(i, j, k)))/nq)
	}
	add(mix(nsDist, distBucket(p.matchDistance(i, j))), 1)
	var inQ int
	for t := i; t <= j; t++ {
		if p.toks[t].qbit >= 0 {
			inQ++
		}
	}
	add(mix(nsInQuestion), float64(inQ)/float64(j-i+1))
	if inQ == j-i+1 {
		add(mix(nsInQuestion, 1), 1)
	}
}

// windowMask is the set of question words within k tokens either side of the span, inside its sentence.
func (p *passage) windowMask(i, j, k int) uint64 {
	var m uint64
	s := p.toks[i].sent
	for t := max(i-k, 0); t < i; t++ {
		if q := p.toks[t].qbit; q >= 0 && p.toks[t].sent == s {
			m |= 1 << q
		}
	}
	for t := j + 1; t <= j+k && t < len(p.toks); t++ {
		if q := p.toks[t].qbit; q >= 0 && p.toks[t].sent == s {
			m |= 1 << q
		}
	}
	return m
}

// matchDistance is the distance in tokens to the nearest question word outside the span, or -1.
func (p *passage) matchDistance(i, j int) int {
	d := -1
	if m := p.prevMatch[i]; m >= 0 {
		d = i - m
	}
	if m := p.nextMatch[j]; m >= 0 && (d < 0 || m-j < d) {
		d = m - j
	}
	return d
}

func distBucket(d int) uint64 {
	switch {
	case d < 0:
		return 0
	case d <= 3:
		return uint64(d)
	case d <= 5:
		return 4
	case d <= 9:
		return 5
	}
	return 6
}

// focusFeatures look for the question's focus word ("city" in "which city") in and next to the span.
func (p *passage) focusFeatures(i, j int, add func(key uint64, val float64)) {
	f := p.q.focus
	if f == "" {
		return
	}
	for t := i; t <= j; t++ {
		if p.toks[t].norm == f {
			add(mix(nsFocus, 0), 1)
			break
		}
	}
	if j+1 < len(p.toks) && p.toks[j+1].norm == f {
		add(mix(nsFocus, 1), 1)
	}
	for t := max(i-3, 0); t < min(j+4, len(p.toks)); t++ {
		if (t < i || t > j) && p.toks[t].norm == f {
			add(mix(nsFocus, 2), 1)
			return
		}
	}
}

// hasProp reports one span property.
func (p *passage) hasProp(i, j int, prop uint64) bool {
	toks := p.toks
	all := func(f tokFlags) bool {
		for t := i; t <= j; t++ {
			if toks[t].flags&f == 0 {
				return false
			}
		}
		return true
	}
	switch prop {
	case pAllCap:
		return all(tCap)
	case pFirstCap:
		return toks[i].flags&tCap != 0
	case pNoCap:
		return !anyFlag(toks[i:j+1], tCap)
	case pDigit:
		return anyFlag(toks[i:j+1], tDigit)
	case pAllNumber:
		return all(tNumber)
	case pYear:
		return anyFlag(toks[i:j+1], tYear)
	case pMonth:
		return anyFlag(toks[i:j+1], tMonth)
	case pEndsUnit:
		return toks[j].flags&tUnit != 0 && anyFlag(toks[i:j+1], tNumber)
	case pSentStart:
		return i == 0 || toks[i-1].sent != toks[i].sent
	case pSentEnd:
		return j+1 == len(toks) || toks[j+1].sent != toks[j].sent
	case pCutsName:
		return p.cutsName(i, j)
	case pNextNumber:
		return j+1 < len(toks) && toks[j+1].sent == toks[j].sent && toks[j+1].flags&(tNumber|tUnit) != 0
	}
	return false
}

func anyFlag(toks []spanToken, f tokFlags) bool {
	for _, t := range toks {
		if t.flags&f != 0 {
			return true
		}
	}
	return false
}

// cutsName reports a capitalised span with a capitalised content word right before or after it.
func (p *passage) cutsName(i, j int) bool {
	toks := p.toks
	if toks[i].flags&tCap == 0 && toks[j].flags&tCap == 0 {
		return false
	}
	name := func(t, beside int) bool {
		return t >= 0 && t < len(toks) && toks[t].sent == toks[beside].sent && toks[t].flags&tCap != 0 &&
			toks[t].flags&tStop == 0
	}
	return name(i-1, i) || name(j+1, j)
}
