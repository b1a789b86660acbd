package builtin

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Don't stop!", []string{"do", "n't", "stop", "!"}},
		{"It’s 3.5 km, not 1,200.", []string{"it", "'s", "3.5", "km", "not", "1,200"}},
		{"well-known [GROUP] members?", []string{"well-known", "group", "members", "?"}},
		{"", nil},
		{"\xff\xfe", nil},
	} {
		if got := words(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("words(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTokenizeContext(t *testing.T) {
	t.Parallel()
	s := "Lake Varna is 212 metres deep. It freezes in December! Ice-skating follows"
	toks := tokenizeContext(s)
	var got []string
	var sents []int
	for _, tk := range toks {
		got = append(got, s[tk.start:tk.end])
		sents = append(sents, tk.sent)
	}
	want := []string{"Lake", "Varna", "is", "212", "metres", "deep", "It", "freezes", "in", "December", "Ice-skating", "follows"}
	if !slices.Equal(got, want) {
		t.Fatalf("tokens = %q, want %q", got, want)
	}
	if wantSents := []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2}; !slices.Equal(sents, wantSents) {
		t.Errorf("sentences = %v, want %v", sents, wantSents)
	}
	if toks[9].flags&tMonth == 0 || toks[3].flags&tNumber == 0 || toks[4].flags&tUnit == 0 || toks[2].flags&tStop == 0 {
		t.Errorf("flags not set: %+v", toks)
	}
}

func TestQuestionType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q     string
		qtype uint64
		focus string
	}{
		{"Who wrote The Salt Road?", qWho, ""},
		{"In what year was the bridge opened?", qWhen, "year"},
		{"How many arches does the bridge have?", qHowMany, ""},
		{"How long is the river?", qHowMeasure, ""},
		{"Which river feeds the lake?", qWhat, "river"},
		{"Where is the final played?", qWhere, ""},
		{"name the river", qOther, ""},
	} {
		q := parseQuestion(tc.q)
		if q.qtype != tc.qtype || q.focus != tc.focus {
			t.Errorf("%q: type %d focus %q, want %d %q", tc.q, q.qtype, q.focus, tc.qtype, tc.focus)
		}
	}
}

func TestPairCues(t *testing.T) {
	t.Parallel()
	prem := words("The two dogs are not sleeping on the sofa.")
	for _, tc := range []struct {
		hyp           string
		cov, neg, num string
	}{
		{"The dogs are not sleeping.", "all", "both", "premise-only"},
		{"The dogs are sleeping.", "all", "premise-only", "premise-only"},
		{"Three cats never sleep.", "some", "both", "mismatch"},
		{"Two dogs are running outside.", "half", "premise-only", "match"},
		{"Nothing happened at the market.", "little", "both", "premise-only"},
	} {
		hyp := words(tc.hyp)
		cov, _ := coverage(prem, hyp)
		neg := sides(slices.ContainsFunc(prem, isNegation), slices.ContainsFunc(hyp, isNegation))
		if num := numberCue(prem, hyp); cov != tc.cov || neg != tc.neg || num != tc.num {
			t.Errorf("%q: coverage %s negation %s number %s, want %s %s %s", tc.hyp, cov, neg, num, tc.cov, tc.neg, tc.num)
		}
	}
}

func TestDecoderNeverPanics(t *testing.T) {
	t.Parallel()
	d := &decoder{buf: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}}
	if d.str(); d.err == nil {
		t.Fatal("no error for an overlong varint")
	}
	d = &decoder{buf: []byte{200}}
	if s := d.str(); s != "" || d.err == nil {
		t.Fatalf("str() = %q, %v on a truncated string", s, d.err)
	}
}
