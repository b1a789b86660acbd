package openai

import (
	"math"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench/internal/adapters/spec"
)

func labels(ls ...string) spec.Spec {
	return spec.Spec{Kind: spec.Classification, Labels: ls, LabelField: "label", ProbField: "prob"}
}

func TestParseLabel(t *testing.T) {
	t.Parallel()
	nli := labels("entailed", "neutral", "contradictory")
	hs := labels("not-hateful", "hateful")
	hs2 := labels("hateful", "non-hateful")
	tests := []struct {
		spec    spec.Spec
		reply   string
		want    string
		problem string
	}{
		{nli, "entailed", "entailed", ""},
		{nli, " Neutral.\n", "neutral", ""},
		{nli, "**Contradictory**", "contradictory", ""},
		{nli, `"entailed"`, "entailed", ""},
		{nli, "The answer is: neutral", "neutral", ""},
		{nli, "Label: Entailed, because the premise says so.", "entailed", ""},
		{nli, "<think>It could be entailed, or neutral.</think>\n\nneutral", "neutral", ""},
		{nli, "entailed or neutral", "", "names more than one"},
		{nli, "I don't know", "", "names none of"},
		{nli, "entailment", "", "names none of"}, // never a guess from a near miss
		{nli, "   ", "", "empty reply"},
		{nli, "<think>entailed</think>", "", "empty reply"},
		{hs, "not hateful", "not-hateful", ""},
		{hs, "Not-Hateful", "not-hateful", ""},
		{hs, "This is hateful.", "hateful", ""},
		{hs, "The statement is not_hateful", "not-hateful", ""},
		{hs, "hateful? No: not-hateful", "", "names more than one"},
		{hs2, "non-hateful", "non-hateful", ""},
		{hs2, "hatefulness", "", "names none of"},
	}
	for _, tt := range tests {
		got, err := parseLabel(tt.spec, tt.reply)
		if tt.problem != "" {
			if err == nil || !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("parseLabel(%q) = %q, %v; want an error with %q", tt.reply, got, err, tt.problem)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseLabel(%q) = %q, %v; want %q", tt.reply, got, err, tt.want)
		}
	}
}

func TestFindSpan(t *testing.T) {
	t.Parallel()
	ctx := "The Eiffel Tower is in Paris,\nthe capital of France. Straße 5 is ÉTÉ."
	tests := []struct{ reply, want string }{
		{"Paris", "Paris"},
		{"paris", "Paris"},
		{" \"Paris.\" ", "Paris"},
		{"the capital of france", "the capital of France"},
		{"Paris, the capital", "Paris,\nthe capital"},
		{"straße 5", "Straße 5"},
		{"été", "ÉTÉ"},
		{"<think>hmm</think>Eiffel Tower", "Eiffel Tower"},
		{"London", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := findSpan(ctx, tt.reply)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("findSpan(%q) = %q, %v; want %q", tt.reply, got, ok, tt.want)
		}
	}
}

func top(pairs ...any) tokenLogprob {
	var t tokenLogprob
	for i := 0; i < len(pairs); i += 2 {
		t.TopLogprobs = append(t.TopLogprobs, struct {
			Token   string  `json:"token"`
			Logprob float64 `json:"logprob"`
		}{pairs[i].(string), pairs[i+1].(float64)})
	}
	if len(t.TopLogprobs) > 0 {
		t.Token, t.Logprob = t.TopLogprobs[0].Token, t.TopLogprobs[0].Logprob
	}
	return t
}

func TestLabelProbs(t *testing.T) {
	t.Parallel()
	nli := labels("entailed", "neutral", "contradictory")
	sent := labels("negative", "neutral", "positive")
	lp := func(p float64) float64 { return math.Log(p) }

	got := labelProbs(nli, []tokenLogprob{top("Ent", lp(0.6), " neutral", lp(0.2), "contr", lp(0.1), "!", lp(0.05), "The", lp(0.05))})
	want := map[string]float64{"entailed": 0.6 / 0.9, "neutral": 0.2 / 0.9, "contradictory": 0.1 / 0.9}
	for l, p := range want {
		if math.Abs(got[l]-p) > 1e-9 {
			t.Errorf("prob[%s] = %v, want %v (all: %v)", l, got[l], p, got)
		}
	}
	// "ne" begins both negative and neutral: it counts for neither. A leading quote token is skipped.
	got = labelProbs(sent, []tokenLogprob{top(`"`, 0.0), top("ne", lp(0.5), "pos", lp(0.25))})
	if got["positive"] != 1 || got["neutral"] != 0 || got["negative"] != 0 {
		t.Errorf("ambiguous token: %v", got)
	}
	if got := labelProbs(nli, []tokenLogprob{top("Hmm", lp(0.9))}); got != nil {
		t.Errorf("no label token: %v, want nil (no prob)", got)
	}
	if got := labelProbs(nli, nil); got != nil {
		t.Errorf("no logprobs: %v", got)
	}
	if p, ok := sequenceProb([]tokenLogprob{{Logprob: lp(0.5)}, {Logprob: lp(0.5)}}); !ok || math.Abs(p-0.25) > 1e-12 {
		t.Errorf("sequenceProb = %v, %v", p, ok)
	}
}
