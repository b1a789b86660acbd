package openai

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

// The answer parsers below never guess: a reply that does not name exactly one label, or a span
// that is not in the context, is an invalid answer, which the platform records as such.

// punct is what a model wraps a bare answer in: quotes, Markdown emphasis, a final full stop.
const punct = " \t\r\n\"'`*_.!:;,()[]{}“”‘’"

// stripThinking drops the reasoning block some models emit before the answer (<think>…</think>).
func stripThinking(s string) string {
	if i := strings.LastIndex(s, "</think>"); i >= 0 {
		return s[i+len("</think>"):]
	}
	return s
}

// parseLabel reads a classification reply: the label itself (ignoring case, surrounding space,
// quotes and punctuation), else the one label the reply mentions as a whole word, where "not
// hateful" mentions the label "not-hateful" and not "hateful" within it.
func parseLabel(sp spec.Spec, reply string) (string, error) {
	text := strings.TrimSpace(stripThinking(reply))
	if text == "" {
		return "", spec.Invalidf("empty reply, want one of %s", sp.LabelList())
	}
	if l, ok := sp.MatchLabel(text); ok {
		return l, nil
	}
	if l, ok := sp.MatchLabel(strings.Trim(text, punct)); ok {
		return l, nil
	}
	found := mentioned(sp.Labels, text)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", spec.Invalidf("reply %s names none of %s", spec.Quote(text), sp.LabelList())
	}
	return "", spec.Invalidf("reply %s names more than one of %s", spec.Quote(text), sp.LabelList())
}

// mentioned returns the labels text mentions as whole words, leaving out a label whose every
// mention lies inside the mention of a longer label.
func mentioned(labels []string, text string) []string {
	t := []rune(normalise(text))
	type span struct{ lo, hi int }
	spans := make([][]span, len(labels))
	for i, l := range labels {
		lr := []rune(normalise(l))
		for at := 0; len(lr) > 0 && at+len(lr) <= len(t); at++ {
			if equalRunes(t[at:at+len(lr)], lr) && boundary(t, at-1) && boundary(t, at+len(lr)) {
				spans[i] = append(spans[i], span{at, at + len(lr)})
			}
		}
	}
	var found []string
	for i, own := range spans {
		inside := 0
		for _, s := range own {
		outer:
			for j, other := range spans {
				for _, o := range other {
					if j != i && o.hi-o.lo > s.hi-s.lo && o.lo <= s.lo && s.hi <= o.hi {
						inside++
						break outer
					}
				}
			}
		}
		if len(own) > 0 && inside < len(own) {
			found = append(found, labels[i])
		}
	}
	return found
}

// normalise lowercases, treats - and _ as spaces, and collapses runs of space.
func normalise(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		r = unicode.ToLower(r)
		if r == '-' || r == '_' || unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

func equalRunes(a, b []rune) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// boundary reports whether position i of t is outside a word (or outside t).
func boundary(t []rune, i int) bool {
	return i < 0 || i >= len(t) || !(unicode.IsLetter(t[i]) || unicode.IsDigit(t[i]))
}

// findSpan finds a QA reply in the context, ignoring case and treating any run of white space as
// any other, and returns the context's own text of it (so the answer is a true span).
func findSpan(context, reply string) (string, bool) {
	text := strings.TrimSpace(stripThinking(reply))
	candidates := []string{text, strings.Trim(text, "\"'`*“”‘’"), strings.Trim(text, punct)}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if lo, hi := indexFold(context, c); lo >= 0 {
			return context[lo:hi], true
		}
	}
	return "", false
}

// indexFold returns the byte span of the first match of sub in s (see findSpan), or -1, -1.
func indexFold(s, sub string) (int, int) {
	for i := 0; i < len(s); {
		if n, ok := prefixFold(s[i:], sub); ok {
			return i, i + n
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return -1, -1
}

// prefixFold reports whether s starts with prefix (see findSpan) and how many bytes of s match.
func prefixFold(s, prefix string) (int, bool) {
	i, j := 0, 0
	for j < len(prefix) {
		pr, psize := utf8.DecodeRuneInString(prefix[j:])
		if i >= len(s) {
			return 0, false
		}
		sr, ssize := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(pr) {
			if !unicode.IsSpace(sr) {
				return 0, false
			}
			j = skipSpace(prefix, j)
			i = skipSpace(s, i)
			continue
		}
		if sr != pr && unicode.ToLower(sr) != unicode.ToLower(pr) {
			return 0, false
		}
		i, j = i+ssize, j+psize
	}
	return i, true
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += size
	}
	return i
}

// labelProbs maps the first answer token's top_logprobs onto the labels: a token counts for the
// one label it begins (ignoring case and surrounding punctuation); tokens that begin several labels
// or none are dropped. nil when no token maps to a label.
func labelProbs(sp spec.Spec, tokens []tokenLogprob) map[string]float64 {
	first := -1
	for i, t := range tokens {
		if strings.Trim(t.Token, punct) != "" {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	mass := map[string]float64{}
	total := 0.0
	for _, top := range tokens[first].TopLogprobs {
		tok := normalise(strings.Trim(top.Token, punct))
		if tok == "" || math.IsNaN(top.Logprob) || top.Logprob > 0 {
			continue
		}
		var match string
		n := 0
		for _, l := range sp.Labels {
			if strings.HasPrefix(normalise(l), tok) {
				match, n = l, n+1
			}
		}
		if n == 1 {
			p := math.Exp(top.Logprob)
			mass[match] += p
			total += p
		}
	}
	if total == 0 {
		return nil
	}
	probs := make(map[string]float64, len(sp.Labels))
	for _, l := range sp.Labels {
		probs[l] = mass[l] / total
	}
	return probs
}

// sequenceProb is the probability of the whole reply: exp of the sum of its tokens' logprobs.
func sequenceProb(tokens []tokenLogprob) (float64, bool) {
	if len(tokens) == 0 {
		return 0, false
	}
	sum := 0.0
	for _, t := range tokens {
		if math.IsNaN(t.Logprob) || t.Logprob > 0 {
			return 0, false
		}
		sum += t.Logprob
	}
	return math.Exp(sum), true
}
