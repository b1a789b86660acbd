package builtin

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// words lower-cases s and splits it into tokens: runs of letters and digits (joined across an apostrophe or
// hyphen between letters, and a point or comma between digits), plus "!" and "?" which carry sentiment. A
// clitic is split off the way treebanks do it, so negation is one token: "don't" → "do", "n't".
func words(s string) []string {
	s = strings.ToLower(s)
	var out []string
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isWordRune(r):
			j := scanWord(s, i)
			out = appendClitics(out, normApostrophe(s[i:j]))
			i = j
		case r == '!' || r == '?':
			out = append(out, s[i:i+size])
			i += size
		default:
			i += size
		}
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

// scanWord returns the end of the word that starts at s[i]: word runes, and single joiners between them.
func scanWord(s string, i int) int {
	prev, size := utf8.DecodeRuneInString(s[i:])
	j := i + size
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if isWordRune(r) {
			prev, j = r, j+size
			continue
		}
		next, nsize := utf8.DecodeRuneInString(s[j+size:])
		if nsize == 0 || !joins(prev, r, next) {
			break
		}
		prev, j = next, j+size+nsize
	}
	return j
}

// joins reports whether r keeps prev and next in one word: "it's", "well-known", "3.5", "1,200".
func joins(prev, r, next rune) bool {
	switch {
	case isApostrophe(r) || r == '-':
		return unicode.IsLetter(prev) && unicode.IsLetter(next)
	case r == '.' || r == ',':
		return unicode.IsDigit(prev) && unicode.IsDigit(next)
	}
	return false
}

func normApostrophe(w string) string { return strings.ReplaceAll(w, "’", "'") }

// appendClitics appends w, split before a clitic: "n't", "'s", "'re", "'ll", "'ve", "'d", "'m".
func appendClitics(out []string, w string) []string {
	if strings.HasSuffix(w, "n't") && len(w) > 3 {
		return append(out, w[:len(w)-3], "n't")
	}
	if k := strings.LastIndexByte(w, '\''); k > 0 {
		switch w[k+1:] {
		case "s", "re", "ll", "ve", "d", "m":
			return append(out, w[:k], w[k:])
		}
	}
	return append(out, w)
}

// stem strips a few English inflections so "rivers", "river" and "river's" match. It is crude on purpose:
// the same function is applied to both sides of every comparison.
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if len(w) >= len(suf)+3 && strings.HasSuffix(w, suf) && !strings.HasSuffix(w, "ss") {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// isNegation reports negation cues.
func isNegation(w string) bool {
	switch w {
	case "not", "no", "never", "nobody", "nothing", "n't", "cannot", "neither", "nor", "nowhere", "none":
		return true
	}
	return false
}

// quantifiers are the cue words whose presence on one side of a sentence pair often decides NLI labels.
var quantifiers = []string{"all", "some", "none", "every", "only", "most", "few", "many", "several", "both"}

// numberValue canonicalises a number token ("1,200" → "1200", "three" → "3"); ok is false for other words.
func numberValue(w string) (string, bool) {
	if v, ok := numberWords[w]; ok {
		return v, true
	}
	if w == "" || !unicode.IsDigit(rune(w[0])) {
		return "", false
	}
	for _, r := range w {
		if !unicode.IsDigit(r) && r != '.' && r != ',' {
			return "", false
		}
	}
	return strings.ReplaceAll(w, ",", ""), true
}

var numberWords = map[string]string{
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
	"eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
	"fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
	"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000", "million": "1000000",
	"dozen": "12", "half": "0.5", "twice": "2x", "once": "1x", "first": "1st", "second": "2nd", "third": "3rd",
}

// isStop reports function words that carry no content for overlap features. Negations and quantifiers are
// deliberately absent: the pair features look at them separately.
func isStop(w string) bool { _, ok := stopWords[w]; return ok }

var stopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a an the and or but if then than so as of at by for with about into onto
		from to in on over under up down out off again further once here there when where why how what which who
		whom whose this that these those is am are was were be been being have has had having do does did doing
		would should could can will shall must might i me my myself we our ours you your yours he him his she
		her hers it its itself they them their theirs 's 're 'll 've 'd 'm very too just also such own same other
		any each more while during before after above below between through against until because yet ! ?`) {
		m[w] = struct{}{}
	}
	return m
}()

var months = map[string]bool{
	"january": true, "february": true, "march": true, "april": true, "may": true, "june": true, "july": true,
	"august": true, "september": true, "october": true, "november": true, "december": true,
}

// units are words that follow a quantity; a span ending in one answers "how long/far/old" questions.
var units = map[string]bool{
	"year": true, "years": true, "month": true, "months": true, "week": true, "weeks": true, "day": true,
	"days": true, "hour": true, "hours": true, "minute": true, "minutes": true, "second": true, "seconds": true,
	"century": true, "centuries": true, "decade": true, "decades": true, "metre": true, "metres": true,
	"meter": true, "meters": true, "kilometre": true, "kilometres": true, "kilometer": true, "kilometers": true,
	"km": true, "mile": true, "miles": true, "feet": true, "foot": true, "kilogram": true, "kilograms": true,
	"kg": true, "tonne": true, "tonnes": true, "tons": true, "percent": true, "per": true, "dollars": true,
	"euros": true, "pounds": true, "people": true, "degrees": true, "litres": true, "liters": true,
}
