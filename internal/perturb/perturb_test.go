package perturb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func mustLookup(t testing.TB, name string) Perturbation {
	t.Helper()
	p, ok := Lookup(name)
	if !ok {
		t.Fatalf("no perturbation %q", name)
	}
	return p
}

func rngFor(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0xabcdef)) }

// apply runs p on text with a fixed rng.
func apply(t testing.TB, name, text string, seed uint64) (string, bool) {
	t.Helper()
	return mustLookup(t, name).Apply(text, rngFor(seed))
}

func TestRegistry(t *testing.T) {
	if got := len(ByKind(KindRobustness)); got != 8 {
		t.Errorf("robustness perturbations = %d, want 8", got)
	}
	if got := len(ByKind(KindFairness)); got != 2 {
		t.Errorf("fairness perturbations = %d, want 2", got)
	}
	if ByKind("other") != nil {
		t.Error("unknown kind should give nil")
	}
	seen := map[string]bool{}
	for _, p := range All() {
		if seen[p.Name()] || p.Name() == "" || strings.Contains(p.Name(), "__") || strings.ContainsAny(p.Name(), " /") {
			t.Errorf("bad or duplicate name %q", p.Name())
		}
		seen[p.Name()] = true
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup found a missing name")
	}
}

func TestKeyboardNeighbours(t *testing.T) {
	want := map[byte]string{'q': "wa", 'a': "qwsz", 's': "weadzx", 'm': "jkn", 'p': "ol"}
	for k, v := range want {
		if got := keyNeighbours[k]; got != v {
			t.Errorf("neighbours of %c = %q, want %q", k, got, v)
		}
	}
	if len(keyNeighbours) != 26 {
		t.Errorf("%d keys", len(keyNeighbours))
	}
}

func TestKeyboardTypo(t *testing.T) {
	for seed := range uint64(50) {
		in := "Hello World"
		out, ch := apply(t, "keyboard", in, seed)
		if !ch || len(out) != len(in) {
			t.Fatalf("seed %d: %q changed=%v", seed, out, ch)
		}
		diff := 0
		for i := range in {
			if in[i] == out[i] {
				continue
			}
			diff++
			a, b := in[i], out[i]
			if unicode.IsUpper(rune(a)) != unicode.IsUpper(rune(b)) {
				t.Errorf("seed %d: case not kept %q -> %q", seed, a, b)
			}
			if !strings.ContainsRune(keyNeighbours[a|0x20], rune(b|0x20)) {
				t.Errorf("seed %d: %c is not a neighbour of %c", seed, b, a)
			}
		}
		if diff != 1 {
			t.Errorf("seed %d: %d letters changed in %q, want 1", seed, diff, out)
		}
	}
	if out, ch := apply(t, "keyboard", "123 !!! ÉÈ", 1); ch {
		t.Errorf("no ASCII letter, but changed to %q", out)
	}
}

func TestCharSwap(t *testing.T) {
	out, ch := apply(t, "char_swap", "ab", 3)
	if !ch || out != "ba" {
		t.Errorf("got %q %v, want \"ba\"", out, ch)
	}
	out, _ = apply(t, "char_swap", "héllo", 7)
	if !utf8.ValidString(out) || len([]rune(out)) != 5 {
		t.Errorf("bad swap %q", out)
	}
	// doubled letters and single letters cannot be swapped
	if out, ch := apply(t, "char_swap", "aa I b", 1); ch {
		t.Errorf("changed to %q", out)
	}
	// swaps never cross word boundaries
	for seed := range uint64(30) {
		out, _ := apply(t, "char_swap", "ab cd", seed)
		if out != "ba cd" && out != "ab dc" {
			t.Errorf("seed %d: %q", seed, out)
		}
	}
}

func TestMisspelling(t *testing.T) {
	if n := len(misspellings); n < 40 {
		t.Errorf("%d misspellings, want about 40", n)
	}
	cases := map[string]string{
		"I receive it.":             "I recieve it.",
		"Receive, RECEIVE, receive": "Recieve, RECIEVE, recieve",
		"receiver received":         "receiver received", // whole words only
		"We believe until tomorrow": "We beleive untill tommorow",
	}
	for in, want := range cases {
		if got, _ := apply(t, "misspelling", in, 1); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
	for good, bad := range misspellings {
		if good == bad || strings.ToLower(good) != good {
			t.Errorf("bad entry %q -> %q", good, bad)
		}
	}
}

func TestCaseChange(t *testing.T) {
	for seed := range uint64(30) {
		in := "the cat sat"
		out, ch := apply(t, "case", in, seed)
		if !ch || strings.ToLower(out) != in {
			t.Errorf("seed %d: %q (changed %v)", seed, out, ch)
		}
	}
	if out, ch := apply(t, "case", "123 456 !?", 1); ch {
		t.Errorf("no letters but changed: %q", out)
	}
}

func TestContractions(t *testing.T) {
	cases := map[string]string{
		"I do not know.":             "I don't know.",
		"Do not go.":                 "Don't go.",
		"DO NOT GO":                  "DON'T GO",
		"Don't go.":                  "Do not go.",
		"DON'T":                      "DO NOT",
		"don’t":                      "do not", // typographic apostrophe
		"You cannot.":                "You can't.",
		"You can't.":                 "You cannot.",
		"It won't.":                  "It will not.",
		"It is raining.":             "It's raining.",
		"I know what it is.":         "I know what it is.", // no clause-final contraction
		"It's raining.":              "It's raining.",      // 's is ambiguous: never expanded
		"I'd go.":                    "I'd go.",            // 'd is ambiguous
		"I am here. I'm here.":       "I'm here. I am here.",
		"Yes I am.":                  "Yes I am.",
		"I've got it.":               "I have got it.",
		"I have a cat.":              "I have a cat.", // "have" is never contracted
		"Isn't it? Don't you see?":   "Isn't it? Don't you see?",
		"It isn't fair.":             "It is not fair.",
		"They will come, we'll see.": "They'll come, we will see.",
		"Dont do this":               "Dont do this",
		"undo nothing":               "undo nothing", // word boundaries
	}
	for in, want := range cases {
		if got, _ := apply(t, "contraction", in, 1); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}

func TestPunctuationNoise(t *testing.T) {
	strip := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsPunct(r) {
				return -1
			}
			return r
		}, s)
	}
	for seed := range uint64(50) {
		in := "Hello, world. How are you?"
		out, ch := apply(t, "punctuation", in, seed)
		if !ch || strip(out) != strip(in) {
			t.Errorf("seed %d: %q: only punctuation may change", seed, out)
		}
	}
	out, ch := apply(t, "punctuation", "no marks here", 2)
	if !ch || strip(out) != "no marks here" {
		t.Errorf("insertion: %q", out)
	}
}

func TestWhitespaceNoise(t *testing.T) {
	for seed := range uint64(50) {
		in := "Hello world, how are you?"
		out, ch := apply(t, "whitespace", in, seed)
		if !ch || strings.ReplaceAll(out, " ", "") != strings.ReplaceAll(in, " ", "") {
			t.Errorf("seed %d: %q: only spaces may change", seed, out)
		}
	}
	if out, ch := apply(t, "whitespace", "a", 1); ch {
		t.Errorf("nothing to do, got %q", out)
	}
}

func TestHomoglyphs(t *testing.T) {
	for seed := range uint64(30) {
		in := "Peace and love"
		out, ch := apply(t, "homoglyph", in, seed)
		if !ch || utf8.RuneCountInString(out) != utf8.RuneCountInString(in) {
			t.Fatalf("seed %d: %q", seed, out)
		}
		ri, ro := []rune(in), []rune(out)
		for i := range ri {
			if ri[i] != ro[i] && lookAlikes[ri[i]] != ro[i] {
				t.Errorf("seed %d: %q -> %q is not a look-alike", seed, ri[i], ro[i])
			}
		}
	}
	for l, g := range lookAlikes {
		if l >= 0x80 || g < 0x80 {
			t.Errorf("bad look-alike %q -> %q", l, g)
		}
	}
}

func TestGenderSwap(t *testing.T) {
	cases := map[string]string{
		"He said she would.":                      "She said he would.",
		"HE and SHE":                              "SHE and HE",
		"He gave her the book.":                   "She gave him the book.",
		"I saw her yesterday.":                    "I saw him yesterday.",
		"I saw her.":                              "I saw him.",
		"Her mother met his father.":              "His father met her mother.",
		"The book is his.":                        "The book is hers.",
		"The book is hers.":                       "The book is his.",
		"She hurt herself.":                       "He hurt himself.",
		"The man and the women.":                  "The woman and the men.",
		"Theodore, hers, there, the, shed, these": "Theodore, his, there, the, shed, these",
		"He's here.":                              "She's here.",
		"Mr. Smith and his wife":                  "Ms. Smith and her husband",
	}
	for in, want := range cases {
		if got, _ := apply(t, "gender", in, 1); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
	// "hers" must never become "shers", nor "Theodore" become "Tshedore"
	out, _ := apply(t, "gender", "hers Theodore them", 5)
	if strings.Contains(out, "sher") || !strings.Contains(out, "Theodore") {
		t.Errorf("word boundary broken: %q", out)
	}
	// names: a listed name becomes a name of the other gender in the same group
	out, ch := apply(t, "gender", "John met Mary.", 3)
	ws := strings.Fields(strings.Trim(out, "."))
	if !ch || len(ws) != 3 {
		t.Fatalf("%q", out)
	}
	for i, orig := range map[int]string{0: "John", 2: "Mary"} {
		a, b := nameIndex[orig], nameIndex[strings.TrimSuffix(ws[i], ".")]
		if a.group != b.group || a.gender == b.gender {
			t.Errorf("%s -> %s: %+v -> %+v", orig, ws[i], a, b)
		}
	}
	// lower-case "mary" / "john" are not treated as names
	if out, ch := apply(t, "gender", "john and mary", 1); ch {
		t.Errorf("lower-case words changed: %q", out)
	}
}

func TestEthnicNameSwap(t *testing.T) {
	for seed := range uint64(30) {
		in := "John met Maria and Priya; JOHN smiled."
		out, ch := apply(t, "ethnic_names", in, seed)
		if !ch {
			t.Fatalf("seed %d: unchanged", seed)
		}
		var got []string
		for _, w := range words(out) {
			got = append(got, out[w.start:w.end])
		}
		// John met X and Y JOHN smiled
		if len(got) != 7 || got[1] != "met" || got[3] != "and" || got[6] != "smiled" {
			t.Fatalf("seed %d: %q", seed, out)
		}
		if strings.ToUpper(got[0]) != got[5] {
			t.Errorf("seed %d: inconsistent replacement %q / %q", seed, got[0], got[5])
		}
		names := map[string]bool{}
		for i, orig := range map[int]string{0: "John", 2: "Maria", 4: "Priya"} {
			a, b := nameIndex[orig], nameIndex[got[i]]
			if _, ok := nameIndex[got[i]]; !ok || a.group == b.group || a.gender != b.gender {
				t.Errorf("seed %d: %s -> %s", seed, orig, got[i])
			}
			if names[got[i]] {
				t.Errorf("seed %d: two people named %s", seed, got[i])
			}
			names[got[i]] = true
		}
	}
	if out, ch := apply(t, "ethnic_names", "Theodore went home.", 1); ch {
		t.Errorf("unlisted name changed: %q", out)
	}
}

func TestNameLists(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range nameGroups {
		for _, list := range g.names {
			if len(list) < 6 {
				t.Errorf("%s: short list", g.label)
			}
			for _, n := range list {
				if ws := words(n); len(ws) != 1 || ws[0] != (span{0, len(n)}) || patternOf(n) != titleCase {
					t.Errorf("name %q is not one Title-case word", n)
				}
				if seen[n] {
					t.Errorf("name %q listed twice", n)
				}
				seen[n] = true
				if _, ok := genderMap[strings.ToLower(n)]; ok {
					t.Errorf("name %q is also a gendered word", n)
				}
			}
		}
	}
}

func TestCasePattern(t *testing.T) {
	cases := []struct {
		in   string
		p    casePattern
		want string
	}{
		{"he", lowerCase, "she"}, {"He", titleCase, "She"}, {"HE", upperCase, "SHE"},
		{"I", titleCase, "She"}, {"hE", lowerCase, "she"}, {"Do not", titleCase, "She"},
	}
	for _, c := range cases {
		if p := patternOf(c.in); p != c.p {
			t.Errorf("patternOf(%q) = %v, want %v", c.in, p, c.p)
		}
		if got := withCase("she", patternOf(c.in)); got != c.want {
			t.Errorf("withCase(she, %q) = %q, want %q", c.in, got, c.want)
		}
	}
}

var samples = []string{
	"", "a", "I", "The quick brown fox jumps over the lazy dog.",
	"He said: \"Don't tell her mother!\" — she wasn't happy.",
	"Ünïcödé wörds, 日本語のテキスト, and emoji 😀 here.",
	"John and Mary can't receive it until tomorrow, because it is late.",
	"   leading and trailing   ", "tabs\tand\nnewlines\r\n", "'''...!!!???",
	"ǅemal and ǈubica", "İstanbul ß ﬁ", "\u0301\u0301 combining",
}

func TestAllPerturbationsInvariants(t *testing.T) {
	for _, p := range All() {
		for _, s := range samples {
			for seed := range uint64(20) {
				a, ca := p.Apply(s, rngFor(seed))
				b, cb := p.Apply(s, rngFor(seed))
				if a != b || ca != cb {
					t.Errorf("%s: not deterministic on %q", p.Name(), s)
				}
				if !utf8.ValidString(a) {
					t.Errorf("%s: invalid UTF-8 from %q: %q", p.Name(), s, a)
				}
				if ca != (a != s) {
					t.Errorf("%s: changed=%v but %q -> %q", p.Name(), ca, s, a)
				}
			}
		}
	}
}

func TestInvalidUTF8Untouched(t *testing.T) {
	bad := "he said \xff she"
	for _, p := range All() {
		if out, ch := p.Apply(bad, rngFor(1)); ch || out != bad {
			t.Errorf("%s changed invalid UTF-8: %q", p.Name(), out)
		}
	}
}

func TestNilRNG(t *testing.T) {
	for _, p := range All() {
		a, _ := p.Apply("He typed quickly.", nil)
		b, _ := p.Apply("He typed quickly.", nil)
		if a != b {
			t.Errorf("%s: nil rng not deterministic", p.Name())
		}
	}
}

func TestApplyDeterministicAndOrderFree(t *testing.T) {
	fields := map[string]string{"context": "The quick brown fox jumps over the lazy dog.", "hypothesis": "A dog sleeps."}
	p := mustLookup(t, "keyboard")
	a, ca := Apply(fields, p, 42, "uid-1")
	b, cb := Apply(fields, p, 42, "uid-1")
	if !ca || !cb || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("not deterministic: %v / %v", a, b)
	}
	// a field's result doesn't depend on the other fields
	c, _ := Apply(map[string]string{"hypothesis": "A dog sleeps."}, p, 42, "uid-1")
	if c["hypothesis"] != a["hypothesis"] {
		t.Errorf("field result depends on other fields: %q vs %q", c["hypothesis"], a["hypothesis"])
	}
	// the input is not modified
	if fields["context"] != "The quick brown fox jumps over the lazy dog." {
		t.Error("input map modified")
	}
	// other seeds or keys give other results (at least sometimes)
	differ := false
	for s := uint64(0); s < 10; s++ {
		d, _ := Apply(fields, p, s, "uid-1")
		e, _ := Apply(fields, p, 42, fmt.Sprint("uid-", s))
		if fmt.Sprint(d) != fmt.Sprint(a) || fmt.Sprint(e) != fmt.Sprint(a) {
			differ = true
		}
	}
	if !differ {
		t.Error("seed and key have no effect")
	}
	if _, ch := Apply(map[string]string{"x": "123"}, p, 1, "k"); ch {
		t.Error("unchangeable text reported as changed")
	}
}

func TestRNGSeparatesFields(t *testing.T) {
	// length-prefixing keeps ("ab","c") and ("a","bc") apart
	a := RNG(1, "x", "ab", "c").Uint64()
	b := RNG(1, "x", "a", "bc").Uint64()
	if a == b {
		t.Error("hash ambiguity between key and field")
	}
}

func TestDerive(t *testing.T) {
	examples := []Example{
		{UID: "e1", Fields: map[string]string{"context": "He met her father.", "label": "entailment"},
			Protected: map[string]bool{"label": true}},
		{UID: "e2", Fields: map[string]string{"context": "123 456", "label": "neutral"},
			Protected: map[string]bool{"label": true}},
		{UID: "e3", Fields: map[string]string{"context": "John is not here.", "label": "he"},
			Protected: map[string]bool{"label": true}},
	}
	got := Derive(examples, KindFairness, 7)
	byUID := map[string]Derived{}
	for _, d := range got {
		byUID[d.UID] = d
		if d.Kind != KindFairness || d.UID != DerivedUID(d.OriginalUID, d.Kind, d.Perturbation) {
			t.Errorf("bad derived %+v", d)
		}
		if d.OriginalUID == "e2" {
			t.Errorf("unchanged example kept: %+v", d)
		}
	}
	e1, ok := byUID["e1__fairness_gender"]
	if !ok {
		t.Fatalf("missing e1 gender copy in %+v", got)
	}
	if e1.Fields["context"] != "She met his mother." || e1.Fields["label"] != "entailment" {
		t.Errorf("e1: %+v", e1.Fields)
	}
	if _, ok := byUID["e1__fairness_ethnic_names"]; ok {
		t.Error("e1 has no names, ethnic copy should be dropped")
	}
	e3, ok := byUID["e3__fairness_gender"]
	if !ok || e3.Fields["label"] != "he" || e3.OriginalUID != "e3" {
		t.Errorf("e3: %+v (protected label must stay)", e3)
	}
	if _, ok := byUID["e3__fairness_ethnic_names"]; !ok {
		t.Error("e3 ethnic copy missing")
	}
	// robustness: every copy differs from its original
	for _, d := range Derive(examples, KindRobustness, 7) {
		var orig Example
		for _, e := range examples {
			if e.UID == d.OriginalUID {
				orig = e
			}
		}
		if d.Fields["context"] == orig.Fields["context"] {
			t.Errorf("%s kept although unchanged", d.UID)
		}
		if d.Fields["label"] != orig.Fields["label"] {
			t.Errorf("%s: protected field changed", d.UID)
		}
	}
	if Derive(examples, "nope", 1) != nil {
		t.Error("unknown kind should derive nothing")
	}
	// deterministic and order independent
	a := Derive(examples, KindRobustness, 9)
	rev := []Example{examples[2], examples[1], examples[0]}
	b := Derive(rev, KindRobustness, 9)
	am := map[string]string{}
	for _, d := range a {
		am[d.UID] = fmt.Sprint(d.Fields)
	}
	if len(a) != len(b) {
		t.Fatalf("%d vs %d", len(a), len(b))
	}
	for _, d := range b {
		if am[d.UID] != fmt.Sprint(d.Fields) {
			t.Errorf("%s depends on example order", d.UID)
		}
	}
}

func TestDeriveAnchors(t *testing.T) {
	ex := Example{
		UID: "q1",
		Fields: map[string]string{
			"context":  "Marie said he discovered radium in Paris.",
			"question": "Who discovered radium?",
			"answer":   "he",
		},
		Protected: map[string]bool{"answer": true},
		Anchors:   []string{"he discovered radium"},
	}
	got := Derive([]Example{ex}, KindFairness, 1)
	for _, d := range got {
		if d.Perturbation == "gender" {
			t.Errorf("gender swap destroys the anchor but was kept: %q", d.Fields["context"])
		}
	}
	// robustness: every kept copy still contains the anchor
	n := 0
	for seed := range uint64(20) {
		for _, d := range Derive([]Example{ex}, KindRobustness, seed) {
			n++
			if !strings.Contains(d.Fields["context"], "he discovered radium") {
				t.Errorf("seed %d %s: anchor lost: %q", seed, d.UID, d.Fields["context"])
			}
		}
	}
	if n == 0 {
		t.Error("every robustness copy rejected")
	}
	// without anchors the gender copy is kept
	ex.Anchors = nil
	found := false
	for _, d := range Derive([]Example{ex}, KindFairness, 1) {
		found = found || d.Perturbation == "gender"
	}
	if !found {
		t.Error("gender copy missing without anchors")
	}
}

func TestBoundedCount(t *testing.T) {
	cases := []struct {
		s, a string
		n    int
	}{
		{"she discovered", "he discovered", 0},
		{"he discovered", "he discovered", 1},
		{"he said he", "he", 2},
		{"the hero", "he", 0},
		{"Paris, Paris.", "Paris", 2},
		{"(x) (x)", "(x)", 2},
		{"aaa", "aa", 0},
		{"日本 日本語", "日本", 1},
	}
	for _, c := range cases {
		if got := boundedCount(c.s, c.a); got != c.n {
			t.Errorf("boundedCount(%q, %q) = %d, want %d", c.s, c.a, got, c.n)
		}
	}
}

func TestConsistency(t *testing.T) {
	orig := []string{"pos", "neg", "neg", "pos", "neu"}
	pert := []string{"pos", "pos", "neg", "neg", "neu"}
	if got := LabelConsistency(orig, pert); got != 0.6 {
		t.Errorf("label consistency = %v, want 0.6", got)
	}
	if got := Consistency(orig, pert, func(a, b string) bool { return true }); got != 1 {
		t.Errorf("= %v", got)
	}
	for _, c := range [][2][]string{{nil, nil}, {{"a"}, {}}, {{}, {}}} {
		if got := Consistency(c[0], c[1], ExactAgree); !math.IsNaN(got) {
			t.Errorf("undefined case gave %v", got)
		}
	}
	// QA, by hand: F1("Paris", "Paris") = 1; F1("in Paris France", "Paris") =
	// P 1/3, R 1 -> 0.5; F1("the city", "Paris") = 0; mean = 0.5.
	qo := []string{"Paris", "Paris", "Paris"}
	qp := []string{"Paris", "in Paris France", "the city"}
	if got := QAConsistency(qo, qp); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("QA consistency = %v, want 0.5", got)
	}
	// grouped (Dynabench's get_unperturbed_percent): originals a (2 copies:
	// agree, disagree -> 0.5) and b (1 copy: agree -> 1): mean 0.75, while
	// the per-copy share is 2/3.
	ids := []string{"a", "a", "b"}
	o := []string{"x", "x", "y"}
	p := []string{"x", "z", "y"}
	if got := GroupedConsistency(ids, o, p, AgreeScore(ExactAgree)); got != 0.75 {
		t.Errorf("grouped = %v, want 0.75", got)
	}
	if got := LabelConsistency(o, p); math.Abs(got-2.0/3) > 1e-12 {
		t.Errorf("share = %v, want 2/3", got)
	}
	if got := GroupedConsistency(ids[:2], o, p, AgreeScore(ExactAgree)); !math.IsNaN(got) {
		t.Errorf("mismatched lengths gave %v", got)
	}
}

func TestPairs(t *testing.T) {
	derived := []Derived{
		{UID: "a__robustness_case", OriginalUID: "a"},
		{UID: "a__robustness_keyboard", OriginalUID: "a"},
		{UID: "b__robustness_case", OriginalUID: "b"},
		{UID: "c__robustness_case", OriginalUID: "c"},
	}
	orig := map[string]string{"a": "pos", "b": "neg"}
	pert := map[string]string{"a__robustness_case": "pos", "a__robustness_keyboard": "neg", "b__robustness_case": "neg", "c__robustness_case": "pos"}
	ids, o, p, missing := Pairs(derived, orig, pert)
	if missing != 1 || strings.Join(ids, ",") != "a,a,b" || strings.Join(o, ",") != "pos,pos,neg" || strings.Join(p, ",") != "pos,neg,neg" {
		t.Errorf("Pairs = %v %v %v %d", ids, o, p, missing)
	}
}

func TestAnchorsKept(t *testing.T) {
	orig := map[string]string{"c": "he met her"}
	cases := []struct {
		pert    string
		anchors []string
		want    bool
	}{
		{"he met her", []string{"he met"}, true},
		{"she met him", []string{"he met"}, false}, // only a non-word-bounded copy left
		{"he met he", []string{"he"}, false},       // a new copy appeared
		{"HE met her", []string{"met"}, true},      // other text may change
		{"he mét her", []string{"", "met"}, false}, // destroyed
		{"hemet her", []string{"he"}, false},       // whole-word match lost
		{"he met her", []string{"absent"}, true},   // not in the original
		{"he met herx", []string{"absent", "he"}, true},
	}
	for _, c := range cases {
		if got := anchorsKept(orig, map[string]string{"c": c.pert}, c.anchors); got != c.want {
			t.Errorf("%q %q: got %v, want %v", c.pert, c.anchors, got, c.want)
		}
	}
}
