package perturb

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ---- keyboard typos ----

// keyNeighbours maps each lower-case ASCII letter to the letters next to it
// on a QWERTY keyboard: left/right in the same row and the overlapping keys
// in the rows above and below (rows are staggered by 1/4 and 1/2 key).
var keyNeighbours = func() map[byte]string {
	rows := []string{"qwertyuiop", "asdfghjkl", "zxcvbnm"}
	offset := []float64{0, 0.25, 0.75}
	m := make(map[byte]string)
	for ri, row := range rows {
		for ci := 0; ci < len(row); ci++ {
			x := float64(ci) + offset[ri]
			var nb []byte
			for rj, other := range rows {
				if rj < ri-1 || rj > ri+1 {
					continue
				}
				for cj := 0; cj < len(other); cj++ {
					if rj == ri && cj == ci {
						continue
					}
					d := float64(cj) + offset[rj] - x
					if d < 0 {
						d = -d
					}
					if (rj == ri && d == 1) || (rj != ri && d < 1) {
						nb = append(nb, other[cj])
					}
				}
			}
			m[row[ci]] = string(nb)
		}
	}
	return m
}()

// keyboardTypo replaces ASCII letters inside words by a QWERTY neighbour,
// keeping the letter's case.
func keyboardTypo(s string, rng *rand.Rand) string {
	b := []byte(s)
	var pos []int
	for _, w := range words(s) {
		for i := w.start; i < w.end; i++ {
			c := b[i]
			if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
				pos = append(pos, i)
			}
		}
	}
	if len(pos) == 0 {
		return s
	}
	for range edits(s) {
		i := pos[rng.IntN(len(pos))]
		c := b[i]
		upper := c >= 'A' && c <= 'Z'
		nb := keyNeighbours[c|0x20]
		r := nb[rng.IntN(len(nb))]
		if upper {
			r &^= 0x20
		}
		b[i] = r // ASCII for ASCII: UTF-8 stays valid
	}
	return string(b)
}

// ---- adjacent character swap ----

// charSwap swaps two adjacent, different letters inside a word.
func charSwap(s string, rng *rand.Rand) string {
	for range edits(s) {
		type pair struct{ i, n1, n2 int }
		var cands []pair
		for _, w := range words(s) {
			i := w.start
			for i < w.end {
				r1, n1 := utf8.DecodeRuneInString(s[i:])
				if i+n1 >= w.end {
					break
				}
				r2, n2 := utf8.DecodeRuneInString(s[i+n1:])
				if r1 != r2 && unicode.IsLetter(r1) && unicode.IsLetter(r2) {
					cands = append(cands, pair{i, n1, n2})
				}
				i += n1
			}
		}
		if len(cands) == 0 {
			return s
		}
		c := cands[rng.IntN(len(cands))]
		s = s[:c.i] + s[c.i+c.n1:c.i+c.n1+c.n2] + s[c.i:c.i+c.n1] + s[c.i+c.n1+c.n2:]
	}
	return s
}

// ---- common misspellings ----

// misspellings maps a correctly spelled English word to a frequent
// misspelling of it. Every occurrence is replaced, keeping its case.
var misspellings = map[string]string{
	"accommodate": "accomodate", "achieve": "acheive", "address": "adress",
	"apparently": "apparantly", "argument": "arguement", "because": "becuase",
	"beginning": "begining", "believe": "beleive", "calendar": "calender",
	"committee": "commitee", "definitely": "definately", "embarrass": "embarass",
	"environment": "enviroment", "existence": "existance", "foreign": "foriegn",
	"friend": "freind", "government": "goverment", "grammar": "grammer",
	"guarantee": "garantee", "immediately": "immediatly", "independent": "independant",
	"knowledge": "knowlege", "library": "libary", "maintenance": "maintainance",
	"millennium": "millenium", "necessary": "neccessary", "noticeable": "noticable",
	"occasion": "occassion", "occurred": "occured", "occurrence": "occurence",
	"persistent": "persistant", "possession": "posession", "publicly": "publically",
	"receive": "recieve", "recommend": "reccomend", "restaurant": "restaraunt",
	"rhythm": "rythm", "separate": "seperate", "successful": "succesful",
	"surprise": "suprise", "their": "thier", "tomorrow": "tommorow",
	"truly": "truely", "until": "untill", "weird": "wierd", "which": "wich",
}

func misspell(s string, _ *rand.Rand) string {
	var es []edit
	for _, w := range words(s) {
		word := s[w.start:w.end]
		if bad, ok := misspellings[strings.ToLower(word)]; ok {
			es = append(es, edit{w, withCase(bad, patternOf(word))})
		}
	}
	return applyEdits(s, es)
}

// ---- case changes ----

// caseChange rewrites random words to upper, lower or title case (one of
// the forms that differs from the current one).
func caseChange(s string, rng *rand.Rand) string {
	for range edits(s) {
		ws := words(s)
		type cand struct {
			w     span
			forms []string
		}
		var cands []cand
		for _, w := range ws {
			word := s[w.start:w.end]
			var forms []string
			for _, f := range []string{strings.ToUpper(word), strings.ToLower(word), capitalize(strings.ToLower(word))} {
				if f != word && !contains(forms, f) {
					forms = append(forms, f)
				}
			}
			if len(forms) > 0 {
				cands = append(cands, cand{w, forms})
			}
		}
		if len(cands) == 0 {
			return s
		}
		c := cands[rng.IntN(len(cands))]
		s = applyEdits(s, []edit{{c.w, c.forms[rng.IntN(len(c.forms))]}})
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ---- contractions and expansions ----

// contraction is one long form <-> short form pair, written in lower case
// except for "I". Only unambiguous rewrites are enabled:
//   - expand: the short form has one reading ("'s" and "'d" are never
//     expanded: is/has/possessive, had/would);
//   - contract: the long form contracts in every position; pronoun + verb
//     forms ("it is", "they will") also need a following word, since
//     English does not contract clause-finally ("I know who you are").
//     "have" is only expanded, never contracted ("I have a cat").
type contraction struct {
	long, short      string
	expand, contract bool
	needNext         bool
}

var contractionTable = []contraction{
	{"do not", "don't", true, true, false},
	{"does not", "doesn't", true, true, false},
	{"did not", "didn't", true, true, false},
	{"is not", "isn't", true, true, false},
	{"are not", "aren't", true, true, false},
	{"was not", "wasn't", true, true, false},
	{"were not", "weren't", true, true, false},
	{"have not", "haven't", true, true, false},
	{"has not", "hasn't", true, true, false},
	{"had not", "hadn't", true, true, false},
	{"will not", "won't", true, true, false},
	{"would not", "wouldn't", true, true, false},
	{"could not", "couldn't", true, true, false},
	{"should not", "shouldn't", true, true, false},
	{"must not", "mustn't", true, true, false},
	{"cannot", "can't", true, true, false},
	{"I am", "I'm", true, true, true},
	{"you are", "you're", true, true, true},
	{"we are", "we're", true, true, true},
	{"they are", "they're", true, true, true},
	{"I will", "I'll", true, true, true},
	{"you will", "you'll", true, true, true},
	{"we will", "we'll", true, true, true},
	{"they will", "they'll", true, true, true},
	{"I have", "I've", true, false, false},
	{"you have", "you've", true, false, false},
	{"we have", "we've", true, false, false},
	{"they have", "they've", true, false, false},
	{"let us", "let's", true, false, false}, // "let us go" vs "let us in": expand only
	{"it is", "it's", false, true, true},
	{"that is", "that's", false, true, true},
	{"he is", "he's", false, true, true},
	{"she is", "she's", false, true, true},
	{"there is", "there's", false, true, true},
}

// byLong indexes contractions by their long form split into one or two
// lower-case words; byShort by their short form with a plain apostrophe.
var byLong, byShort = func() (map[string]*contraction, map[string]*contraction) {
	l, s := map[string]*contraction{}, map[string]*contraction{}
	for i := range contractionTable {
		c := &contractionTable[i]
		if c.contract {
			l[strings.ToLower(c.long)] = c
		}
		if c.expand {
			s[strings.ToLower(c.short)] = c
		}
	}
	return l, s
}()

// subjectPronoun after a negative contraction marks an inverted question
// or tag ("isn't it?", "don't you think"), where the expansion ("is not
// it?") is ungrammatical; those are left alone.
var subjectPronoun = map[string]bool{
	"i": true, "you": true, "he": true, "she": true, "it": true, "we": true,
	"they": true, "there": true, "this": true, "that": true, "these": true,
	"those": true, "one": true,
}

// contractions contracts every contractible long form and expands every
// expandable short form, keeping the case of the original (lower, Title,
// UPPER). A short form may use ' or ’; contractions are written with '.
func contractions(s string, _ *rand.Rand) string {
	ws := words(s)
	var es []edit
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		// short form: word, apostrophe, word
		if i+1 < len(ws) {
			n := ws[i+1]
			gap := s[w.end:n.start]
			if gap == "'" || gap == "’" {
				key := strings.ToLower(s[w.start:w.end]) + "'" + strings.ToLower(s[n.start:n.end])
				if c, ok := byShort[key]; ok && !(strings.HasSuffix(c.short, "n't") && subjectPronoun[strings.ToLower(nextWord(s, n.end))]) {
					src := s[w.start:n.end]
					es = append(es, edit{span{w.start, n.end}, withCase(c.long, patternOf(src))})
					i++
					continue
				}
			}
			// two-word long form separated by exactly one space
			if gap == " " {
				key := strings.ToLower(s[w.start:w.end]) + " " + strings.ToLower(s[n.start:n.end])
				if c, ok := byLong[key]; ok && (!c.needNext || nextWord(s, n.end) != "") {
					src := s[w.start:n.end]
					es = append(es, edit{span{w.start, n.end}, withCase(c.short, patternOf(src))})
					i++
					continue
				}
			}
		}
		// one-word long form ("cannot")
		if c, ok := byLong[strings.ToLower(s[w.start:w.end])]; ok && !strings.Contains(c.long, " ") {
			es = append(es, edit{w, withCase(c.short, patternOf(s[w.start:w.end]))})
		}
	}
	return applyEdits(s, es)
}

// ---- punctuation noise ----

var insertablePunct = []string{",", ".", "!", "?", ";", ":"}

// punctuationNoise drops, duplicates or inserts punctuation marks, choosing
// among the operations that apply to the text.
func punctuationNoise(s string, rng *rand.Rand) string {
	for range edits(s) {
		var puncts []span
		for i, r := range s {
			if unicode.IsPunct(r) {
				puncts = append(puncts, span{i, i + utf8.RuneLen(r)})
			}
		}
		var ends []int // word ends followed by a space or the end of the text
		for _, w := range words(s) {
			if w.end == len(s) || s[w.end] == ' ' {
				ends = append(ends, w.end)
			}
		}
		ops := 0
		if len(puncts) > 0 {
			ops = 2 // drop, duplicate
		}
		if len(ends) > 0 {
			ops++ // insert after a word
		}
		if ops == 0 {
			return s
		}
		op := rng.IntN(ops)
		if len(puncts) == 0 {
			op = 2
		}
		switch op {
		case 0: // drop
			p := puncts[rng.IntN(len(puncts))]
			s = s[:p.start] + s[p.end:]
		case 1: // duplicate
			p := puncts[rng.IntN(len(puncts))]
			s = s[:p.end] + s[p.start:p.end] + s[p.end:]
		default: // insert after a word
			e := ends[rng.IntN(len(ends))]
			s = s[:e] + insertablePunct[rng.IntN(len(insertablePunct))] + s[e:]
		}
	}
	return s
}

// ---- whitespace noise ----

// whitespaceNoise doubles a space, removes a space between two words, or
// splits a word with a space, choosing among the operations that apply.
func whitespaceNoise(s string, rng *rand.Rand) string {
	for range edits(s) {
		var spaces, joins []int // byte offsets of ' ' / of a single ' ' between word runes
		for i := 0; i < len(s); i++ {
			if s[i] != ' ' {
				continue
			}
			spaces = append(spaces, i)
			if i > 0 && i+1 < len(s) {
				prev, _ := utf8.DecodeLastRuneInString(s[:i])
				next, _ := utf8.DecodeRuneInString(s[i+1:])
				if isWordRune(prev) && isWordRune(next) {
					joins = append(joins, i)
				}
			}
		}
		var splits []int // rune boundaries strictly inside a word
		for _, w := range words(s) {
			_, n := utf8.DecodeRuneInString(s[w.start:])
			for i := w.start + n; i < w.end; {
				splits = append(splits, i)
				_, n := utf8.DecodeRuneInString(s[i:])
				i += n
			}
		}
		type op struct {
			at  []int
			run func(int)
		}
		var ops []op
		if len(spaces) > 0 {
			ops = append(ops, op{spaces, func(i int) { s = s[:i] + " " + s[i:] }})
		}
		if len(joins) > 0 {
			ops = append(ops, op{joins, func(i int) { s = s[:i] + s[i+1:] }})
		}
		if len(splits) > 0 {
			ops = append(ops, op{splits, func(i int) { s = s[:i] + " " + s[i:] }})
		}
		if len(ops) == 0 {
			return s
		}
		o := ops[rng.IntN(len(ops))]
		o.run(o.at[rng.IntN(len(o.at))])
	}
	return s
}

// ---- look-alike unicode ----

// lookAlikes maps Latin letters to Cyrillic or Greek letters that render
// (nearly) identically in common fonts.
var lookAlikes = map[rune]rune{
	'a': 'а', 'c': 'с', 'e': 'е', 'i': 'і', 'o': 'о', 'p': 'р', 'x': 'х', 'y': 'у', // Cyrillic
	'A': 'А', 'B': 'В', 'C': 'С', 'E': 'Е', 'H': 'Н', 'K': 'К', 'M': 'М', 'O': 'О', 'P': 'Р', 'T': 'Т', 'X': 'Х', // Cyrillic
	'v': 'ν', 'I': 'Ι', 'N': 'Ν', 'Z': 'Ζ', // Greek
}

// homoglyphs replaces random Latin letters by a look-alike.
func homoglyphs(s string, rng *rand.Rand) string {
	for range edits(s) {
		var pos []int
		for i, r := range s {
			if _, ok := lookAlikes[r]; ok {
				pos = append(pos, i)
			}
		}
		if len(pos) == 0 {
			return s
		}
		i := pos[rng.IntN(len(pos))]
		r, n := utf8.DecodeRuneInString(s[i:])
		s = s[:i] + string(lookAlikes[r]) + s[i+n:]
	}
	return s
}
