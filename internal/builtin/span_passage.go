package builtin

import (
	"math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokFlags are properties of one context token that answer-type cues look at.
type tokFlags uint16

const (
	tCap tokFlags = 1 << iota
	tDigit
	tNumber
	tYear
	tMonth
	tStop
	tUnit
)

// spanToken is one word of the context with its byte offsets, so an answer is an exact substring.
type spanToken struct {
	start, end int
	norm       string // lower-cased and stemmed
	word       uint64 // hash of the lower-cased word
	sent       int
	flags      tokFlags
	qbit       int // index of the question content word it matches, or -1
}

// Question types, the answer-type cue of a question.
const (
	qOther uint64 = iota
	qWho
	qWhen
	qWhere
	qWhy
	qHowMany
	qHowMuch
	qHowMeasure
	qHow
	qWhat
)

// question is what the span model reads from the question.
type question struct {
	qtype   uint64
	focus   string   // the stemmed word after "what"/"which", e.g. "city" in "which city"
	content []string // distinct stemmed content words, at most 64
}

// passage is a tokenised context read against one question.
type passage struct {
	text      string
	toks      []spanToken
	q         question
	sentMatch []int // distinct question words per sentence
	sentRank  []int // sentences with more question words than this one
	prevMatch []int // per token: nearest earlier token in its sentence matching the question, or -1
	nextMatch []int // per token: nearest later token in its sentence matching the question, or -1
}

func newPassage(context, questionText string) *passage {
	p := &passage{text: context, toks: tokenizeContext(context), q: parseQuestion(questionText)}
	p.matchQuestion()
	return p
}

// tokenizeContext splits s into words with offsets and sentence numbers; a sentence ends at ".", "!", "?"
// or a newline outside a word.
func tokenizeContext(s string) []spanToken {
	var toks []spanToken
	sent, ended := 0, false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			ended = ended || strings.ContainsRune(".!?\n", r)
			i += size
			continue
		}
		if ended && len(toks) > 0 {
			sent++
		}
		ended = false
		j := scanWord(s, i)
		toks = append(toks, newSpanToken(s[i:j], i, j, sent))
		i = j
	}
	return toks
}

func newSpanToken(w string, start, end, sent int) spanToken {
	lower := normApostrophe(strings.ToLower(w))
	t := spanToken{start: start, end: end, norm: stem(lower), word: hashString(lower), sent: sent, qbit: -1}
	first, _ := utf8.DecodeRuneInString(w)
	if unicode.IsUpper(first) {
		t.flags |= tCap
	}
	if strings.IndexFunc(w, unicode.IsDigit) >= 0 {
		t.flags |= tDigit
	}
	if _, ok := numberValue(lower); ok {
		t.flags |= tNumber
	}
	if isYear(lower) {
		t.flags |= tYear
	}
	if months[lower] && t.flags&tCap != 0 {
		t.flags |= tMonth
	}
	if isStop(lower) {
		t.flags |= tStop
	}
	if units[lower] {
		t.flags |= tUnit
	}
	return t
}

// isYear reports "1969", "1990s" and the like.
func isYear(w string) bool {
	w = strings.TrimSuffix(w, "s")
	if len(w) != 4 || strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) }) >= 0 {
		return false
	}
	return w >= "1000" && w <= "2099"
}

// parseQuestion finds the question type, its focus word and its content words.
func parseQuestion(s string) question {
	ws := words(s)
	var q question
	q.qtype, q.focus = questionType(ws)
	for _, w := range ws {
		if isStop(w) || isNegation(w) || slices.Contains(quantifiers, w) || w == "much" || w == "name" {
			continue
		}
		if n := stem(w); !slices.Contains(q.content, n) && len(q.content) < 64 {
			q.content = append(q.content, n)
		}
	}
	return q
}

func questionType(ws []string) (uint64, string) {
	for i, w := range ws {
		next := ""
		if i+1 < len(ws) {
			next = ws[i+1]
		}
		switch w {
		case "who", "whom", "whose":
			return qWho, ""
		case "when":
			return qWhen, ""
		case "where":
			return qWhere, ""
		case "why":
			return qWhy, ""
		case "how":
			return howType(next), ""
		case "what", "which":
			return whatType(ws[i+1:])
		}
	}
	return qOther, ""
}

func howType(next string) uint64 {
	switch next {
	case "many":
		return qHowMany
	case "much":
		return qHowMuch
	case "long", "old", "far", "tall", "big", "large", "high", "deep", "wide", "heavy", "fast", "often":
		return qHowMeasure
	}
	return qHow
}

// whatType refines "what"/"which" by the first content word after it: "what year" asks when.
func whatType(rest []string) (uint64, string) {
	for _, w := range rest {
		if isStop(w) || w == "kind" || w == "type" || w == "name" || w == "sort" {
			continue
		}
		switch w {
		case "year", "date", "month", "day", "century", "decade", "time":
			return qWhen, stem(w)
		case "percentage", "percent", "number", "amount":
			return qHowMany, stem(w)
		}
		return qWhat, stem(w)
	}
	return qWhat, ""
}

// matchQuestion marks the tokens that are question content words and summarises matches per sentence.
func (p *passage) matchQuestion() {
	nsent := 0
	if n := len(p.toks); n > 0 {
		nsent = p.toks[n-1].sent + 1
	}
	masks := make([]uint64, nsent)
	for i := range p.toks {
		t := &p.toks[i]
		if t.flags&tStop == 0 {
			t.qbit = slices.Index(p.q.content, t.norm)
		}
		if t.qbit >= 0 {
			masks[t.sent] |= 1 << t.qbit
		}
	}
	p.sentMatch = make([]int, nsent)
	for s, m := range masks {
		p.sentMatch[s] = bits.OnesCount64(m)
	}
	var above [66]int // above[k]: sentences matching at least k question words
	for _, n := range p.sentMatch {
		above[n]++
	}
	for k := len(above) - 2; k >= 0; k-- {
		above[k] += above[k+1]
	}
	p.sentRank = make([]int, nsent)
	for s, n := range p.sentMatch {
		p.sentRank[s] = above[n+1]
	}
	p.nearestMatches()
}

func (p *passage) nearestMatches() {
	n := len(p.toks)
	p.prevMatch, p.nextMatch = make([]int, n), make([]int, n)
	last := -1
	for i := range n {
		p.prevMatch[i] = -1
		if last >= 0 && p.toks[last].sent == p.toks[i].sent {
			p.prevMatch[i] = last
		}
		if p.toks[i].qbit >= 0 {
			last = i
		}
	}
	last = -1
	for i := n - 1; i >= 0; i-- {
		p.nextMatch[i] = -1
		if last >= 0 && p.toks[last].sent == p.toks[i].sent {
			p.nextMatch[i] = last
		}
		if p.toks[i].qbit >= 0 {
			last = i
		}
	}
}

// candidates calls fn for every span the model may answer: 1 to maxLen tokens inside one sentence, neither
// starting nor ending with a function word.
func (p *passage) candidates(maxLen int, fn func(i, j int)) {
	for i := range p.toks {
		if p.toks[i].flags&tStop != 0 {
			continue
		}
		for j := i; j < len(p.toks) && j < i+maxLen && p.toks[j].sent == p.toks[i].sent; j++ {
			if p.toks[j].flags&tStop == 0 {
				fn(i, j)
			}
		}
	}
}

// spanText is the context text of tokens i..j.
func (p *passage) spanText(i, j int) string { return p.text[p.toks[i].start:p.toks[j].end] }
