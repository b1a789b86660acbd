package taskconfig

import (
	"strings"
	"unicode"
)

// asciiPunctuation is Python's string.punctuation, which the SQuAD script
// strips. Non-ASCII punctuation is kept, as there.
const asciiPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// NormalizeAnswer is the SQuAD v1.1 official answer normalisation: lower
// case, strip punctuation, remove the articles a/an/the, collapse white
// space.
func NormalizeAnswer(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if r < 0x80 && strings.ContainsRune(asciiPunctuation, r) {
			return -1
		}
		return r
	}, s)
	return strings.Join(squadFields(removeArticles(s)), " ")
}

// removeArticles replaces every whole word "a", "an" or "the" by a space,
// like the script's regular expression \b(a|an|the)\b. A word is a maximal
// run of Unicode letters, digits and underscores, which is what \b means
// for Python 3 strings (Go's \b is ASCII-only, hence no regexp here).
func removeArticles(s string) string {
	var out strings.Builder
	out.Grow(len(s))
	start := -1 // start of the current word, -1 outside a word
	flush := func(end int) {
		if w := s[start:end]; w == "a" || w == "an" || w == "the" {
			out.WriteByte(' ')
		} else {
			out.WriteString(w)
		}
		start = -1
	}
	for i, r := range s {
		switch {
		case isWordRune(r) && start < 0:
			start = i
		case !isWordRune(r) && start >= 0:
			flush(i)
			out.WriteRune(r)
		case !isWordRune(r):
			out.WriteRune(r)
		}
	}
	if start >= 0 {
		flush(len(s))
	}
	return out.String()
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// squadFields splits like Python's str.split(), whose white space also
// includes the information separators U+001C..U+001F.
func squadFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
	})
}

// SquadF1 is the SQuAD token F1 between a prediction and a truth, after
// NormalizeAnswer. As in the implementation Dynabench calls (transformers'
// compute_f1), when either side normalises to nothing the score is 1 if
// both do and 0 otherwise.
func SquadF1(prediction, truth string) float64 {
	pred := squadFields(NormalizeAnswer(prediction))
	gold := squadFields(NormalizeAnswer(truth))
	if len(pred) == 0 || len(gold) == 0 {
		if len(pred) == len(gold) {
			return 1
		}
		return 0
	}
	counts := make(map[string]int, len(gold))
	for _, t := range gold {
		counts[t]++
	}
	same := 0
	for _, t := range pred {
		if counts[t] > 0 {
			counts[t]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	precision := float64(same) / float64(len(pred))
	recall := float64(same) / float64(len(gold))
	return 2 * precision * recall / (precision + recall)
}

// ExactMatch reports whether prediction and truth are equal after
// NormalizeAnswer.
func ExactMatch(prediction, truth string) bool {
	return NormalizeAnswer(prediction) == NormalizeAnswer(truth)
}
