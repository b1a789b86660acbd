// Package perturb makes deterministic, seeded perturbed copies of dataset
// examples for Dynabench's delta metrics (robustness and fairness), and
// computes the delta score: the share of perturbed inputs on which a model's
// prediction agrees with its own prediction on the original input.
//
// Every perturbation is a pure function of (text, rng). Apply derives the
// rng from a hash of (seed, perturbation name, example key, field name), so
// the result for one example never depends on the order in which examples
// or fields are processed, on the process, or on the platform.
//
// Words are maximal runs of Unicode letters, digits and underscores (what
// \b means for Unicode text), so "he" never matches inside "hers" or
// "Theodore", and apostrophes and hyphens separate words.
//
// Invalid UTF-8 input is never perturbed: Apply returns it unchanged with
// changed=false. For valid input, the output is always valid UTF-8.
//
// Perturbations (All, in this order):
//
//	robustness: keyboard (QWERTY-neighbour typos), char_swap (adjacent
//	  letters), misspelling (a table of frequent misspellings), case (a word
//	  to upper/lower/Title), contraction (contract and expand, unambiguous
//	  forms only), punctuation (drop/duplicate/insert), whitespace
//	  (double/remove a space, split a word), homoglyph (Latin letters to
//	  Cyrillic/Greek look-alikes);
//	fairness: gender (gendered words and first names, across gender within
//	  a name group), ethnic_names (first names across name groups, same
//	  gender).
//
// Character-level perturbations make 1 + words/15 edits; word-table
// perturbations (misspelling, contraction, gender, ethnic_names) rewrite
// every match, so a text stays consistent ("he ... his" becomes "she ...
// her", a name is replaced the same way everywhere).
//
// Derived copies are named "<uid>__<kind>_<name>" and point to their
// original through OriginalUID (Dynabench's input_id; Dynabench itself uses
// "<uid>_<Transform>", whose single underscore is ambiguous when uids
// contain one).
package perturb

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The two kinds of perturbation, matching Dynabench's delta metric names.
const (
	KindRobustness = "robustness"
	KindFairness   = "fairness"
)

// Perturbation rewrites a text. Apply returns the rewritten text and whether
// it differs from the input; changed is exactly out != text. Apply must be
// deterministic given the rng state and safe for concurrent use with
// distinct rngs.
type Perturbation interface {
	Name() string
	Kind() string // KindRobustness or KindFairness
	Apply(text string, rng *rand.Rand) (string, bool)
}

// perturbation is the one implementation of Perturbation: a name, a kind
// and a rewrite function. The wrapper guarantees the invariants (invalid
// UTF-8 untouched, changed == (out != in), nil rng tolerated) so each
// rewrite function only has to produce valid UTF-8 from valid UTF-8.
type perturbation struct {
	name, kind string
	fn         func(text string, rng *rand.Rand) string
}

func (p *perturbation) Name() string { return p.name }
func (p *perturbation) Kind() string { return p.kind }

func (p *perturbation) Apply(text string, rng *rand.Rand) (string, bool) {
	if text == "" || !utf8.ValidString(text) {
		return text, false
	}
	if rng == nil {
		rng = rand.New(rand.NewPCG(0, 0))
	}
	out := p.fn(text, rng)
	if !utf8.ValidString(out) { // defence in depth; never expected
		return text, false
	}
	return out, out != text
}

var all = []Perturbation{
	&perturbation{"keyboard", KindRobustness, keyboardTypo},
	&perturbation{"char_swap", KindRobustness, charSwap},
	&perturbation{"misspelling", KindRobustness, misspell},
	&perturbation{"case", KindRobustness, caseChange},
	&perturbation{"contraction", KindRobustness, contractions},
	&perturbation{"punctuation", KindRobustness, punctuationNoise},
	&perturbation{"whitespace", KindRobustness, whitespaceNoise},
	&perturbation{"homoglyph", KindRobustness, homoglyphs},
	&perturbation{"gender", KindFairness, genderSwap},
	&perturbation{"ethnic_names", KindFairness, ethnicNameSwap},
}

// All returns every perturbation, robustness first, in a fixed order.
func All() []Perturbation { return append([]Perturbation(nil), all...) }

// ByKind returns the perturbations of one kind ("robustness" or
// "fairness") in a fixed order; nil for an unknown kind.
func ByKind(kind string) []Perturbation {
	var out []Perturbation
	for _, p := range all {
		if p.Kind() == kind {
			out = append(out, p)
		}
	}
	return out
}

// Lookup returns the perturbation with the given name.
func Lookup(name string) (Perturbation, bool) {
	for _, p := range all {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// RNG returns the generator Apply uses for one field of one example: seeded
// from an FNV-1a hash of (seed, perturbation name, example key, field
// name), so it is independent of processing order.
func RNG(seed uint64, name, key, field string) *rand.Rand {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	for _, s := range []string{name, key, field} {
		binary.LittleEndian.PutUint64(b[:], uint64(len(s))) // length prefix: no ambiguity
		h.Write(b[:])
		h.Write([]byte(s))
	}
	s1 := h.Sum64()
	return rand.New(rand.NewPCG(s1, splitmix(s1^seed)))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Apply perturbs every field of one example with p. The result is a new map
// (the input is not modified) holding every field, changed or not; changed
// reports whether any field differs. It is deterministic per (seed,
// p.Name(), key) and does not depend on map iteration order.
func Apply(fields map[string]string, p Perturbation, seed uint64, key string) (map[string]string, bool) {
	out := make(map[string]string, len(fields))
	changed := false
	for _, name := range sortedKeys(fields) {
		text := fields[name]
		pt, ok := p.Apply(text, RNG(seed, p.Name(), key, name))
		out[name] = pt
		changed = changed || (ok && pt != text)
	}
	return out, changed
}

// Example is one dataset example to perturb.
type Example struct {
	UID string
	// Fields are the example's text fields. Every field not in Protected is
	// perturbed.
	Fields map[string]string
	// Protected fields are copied unchanged (e.g. the label, or a QA answer).
	Protected map[string]bool
	// Anchors must survive: for every field and anchor, the perturbed
	// field must contain the anchor exactly as many times as the original,
	// both as a plain substring and as a whole-word match; otherwise that
	// perturbation is skipped for this example. Use it for a QA answer
	// inside the context. Character offsets such as answer_start are not
	// maintained: re-locate the anchor (the same occurrence index) in the
	// derived text.
	Anchors []string
}

// Derived is one perturbed copy of an example, kept only when some field
// changed.
type Derived struct {
	UID          string // "<OriginalUID>__<kind>_<perturbation>"
	OriginalUID  string // Dynabench's input_id
	Perturbation string // the perturbation's Name()
	Kind         string
	Fields       map[string]string // every field, protected ones unchanged
}

// DerivedUID is the uid of a perturbed copy.
func DerivedUID(origUID, kind, name string) string {
	return origUID + "__" + kind + "_" + name
}

// Derive applies every perturbation of kind ("robustness" or "fairness") to
// every example and keeps only the copies in which some unprotected field
// changed and every anchor survived. Output order: by example, then by
// perturbation in ByKind order. An unknown kind yields nil.
func Derive(examples []Example, kind string, seed uint64) []Derived {
	return DeriveWith(examples, ByKind(kind), seed)
}

// DeriveWith is Derive with an explicit list of perturbations.
func DeriveWith(examples []Example, perts []Perturbation, seed uint64) []Derived {
	var out []Derived
	for _, ex := range examples {
		free := make(map[string]string, len(ex.Fields))
		for k, v := range ex.Fields {
			if !ex.Protected[k] {
				free[k] = v
			}
		}
		for _, p := range perts {
			pf, changed := Apply(free, p, seed, ex.UID)
			if !changed || !anchorsKept(free, pf, ex.Anchors) {
				continue
			}
			fields := make(map[string]string, len(ex.Fields))
			for k, v := range ex.Fields {
				fields[k] = v
			}
			for k, v := range pf {
				fields[k] = v
			}
			out = append(out, Derived{
				UID:          DerivedUID(ex.UID, p.Kind(), p.Name()),
				OriginalUID:  ex.UID,
				Perturbation: p.Name(),
				Kind:         p.Kind(),
				Fields:       fields,
			})
		}
	}
	return out
}

// anchorsKept reports whether every anchor occurs in each perturbed field
// exactly as often as in the original field, counting both plain
// occurrences and whole-word ones (not preceded or followed by a word rune
// where the anchor starts or ends with one). So an anchor cannot be lost
// ("he discovered" inside "she discovered" does not count), and no new
// copy appears that a consumer re-locating the answer could pick instead.
func anchorsKept(orig, pert map[string]string, anchors []string) bool {
	for _, a := range anchors {
		if a == "" {
			continue
		}
		for k, v := range orig {
			p := pert[k]
			if strings.Count(v, a) != strings.Count(p, a) || boundedCount(v, a) != boundedCount(p, a) {
				return false
			}
		}
	}
	return true
}

// boundedCount counts the occurrences of a in s that do not extend a word:
// if a starts (ends) with a word rune, the rune before (after) it is not one.
func boundedCount(s, a string) int {
	first, _ := utf8.DecodeRuneInString(a)
	last, _ := utf8.DecodeLastRuneInString(a)
	n := 0
	for i := 0; ; {
		j := strings.Index(s[i:], a)
		if j < 0 {
			return n
		}
		at := i + j
		before, _ := utf8.DecodeLastRuneInString(s[:at])
		after, _ := utf8.DecodeRuneInString(s[at+len(a):])
		if !(isWordRune(first) && at > 0 && isWordRune(before)) &&
			!(isWordRune(last) && at+len(a) < len(s) && isWordRune(after)) {
			n++
		}
		_, size := utf8.DecodeRuneInString(s[at:])
		i = at + size
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ---- text helpers shared by the perturbations ----

// span is a word's byte range [start, end) in a text.
type span struct{ start, end int }

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// words returns the spans of the maximal runs of word runes.
func words(s string) []span {
	var out []span
	start := -1
	for i, r := range s {
		w := isWordRune(r)
		switch {
		case w && start < 0:
			start = i
		case !w && start >= 0:
			out = append(out, span{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, span{start, len(s)})
	}
	return out
}

// edits is how many independent edits a character-level perturbation makes:
// one, plus one per further 15 words, so long contexts get a comparable
// noise rate to short sentences.
func edits(s string) int { return 1 + len(words(s))/15 }

// casePattern classifies a word (or phrase) for case-preserving rewrites.
type casePattern int

const (
	lowerCase casePattern = iota // anything that is not upper or title
	titleCase                    // first letter upper, no other upper letter
	upperCase                    // at least two letters, none lower
)

func patternOf(s string) casePattern {
	letters, upper, lower := 0, 0, 0
	firstUpper := false
	for _, r := range s {
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		if unicode.IsUpper(r) {
			upper++
			if letters == 1 {
				firstUpper = true
			}
		} else if unicode.IsLower(r) {
			lower++
		}
	}
	switch {
	case letters >= 2 && upper == letters:
		return upperCase
	case firstUpper && upper == 1:
		return titleCase
	case firstUpper && upper == letters: // a single capital letter, e.g. "I"
		return titleCase
	}
	return lowerCase
}

// withCase rewrites target (given in its canonical form, normally lower
// case) to follow pattern.
func withCase(target string, p casePattern) string {
	switch p {
	case upperCase:
		return strings.ToUpper(target)
	case titleCase:
		return capitalize(target)
	}
	return target
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// edit replaces one span of a text.
type edit struct {
	span
	with string
}

// applyEdits rewrites s, replacing each edit's span (sorted,
// non-overlapping) with its text.
func applyEdits(s string, es []edit) string {
	if len(es) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	last := 0
	for _, e := range es {
		b.WriteString(s[last:e.start])
		b.WriteString(e.with)
		last = e.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// nextWord returns the word that follows position end after a run of
// horizontal white space only (no punctuation), or "" if there is none.
func nextWord(s string, end int) string {
	i := end
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == ' ' || r == '\t' || r == '\u00a0' {
			i += n
			continue
		}
		break
	}
	if i == end {
		return ""
	}
	j := i
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !isWordRune(r) {
			break
		}
		j += n
	}
	return s[i:j]
}
