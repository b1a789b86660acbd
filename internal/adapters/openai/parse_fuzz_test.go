package openai

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseReply: any reply text, for any label set and context, never panics; a label read from
// it is one of the task's labels and a reply that is exactly a (trimmed) label reads as that label; a span
// found in it is non-empty text of the context itself; a reply that is a piece of the context
// (without surrounding space or a </think> tag) is found.
func FuzzParseReply(f *testing.F) {
	for _, s := range []struct{ reply, ctx, l1, l2 string }{
		{"The answer is: neutral", "A man plays a guitar.", "neutral", "entailed"},
		{"<think>hateful?</think> not hateful", "x", "not-hateful", "hateful"},
		{"**Contradictory**.", "", "contradictory", "neutral"},
		{"a guitar", "A man plays a  Guitar.", "a", "b"},
		{"İstanbul", "istanbul and İSTANBUL", "İ", "ı"},
		{"\xff", "\xfe", "", " "},
		{"non-hateful hateful", "hateful", "hateful", "non-hateful"},
	} {
		f.Add(s.reply, s.ctx, s.l1, s.l2, 0, 0)
	}
	f.Fuzz(func(t *testing.T, reply, ctx, l1, l2 string, lo, hi int) {
		sp := labels(l1, l2)
		got, err := parseLabel(sp, reply)
		again, err2 := parseLabel(sp, reply)
		if got != again || (err == nil) != (err2 == nil) {
			t.Fatalf("parseLabel is not deterministic on %q", reply)
		}
		if err == nil && !slices.Contains(sp.Labels, got) {
			t.Fatalf("parseLabel(%q) = %q, not one of %q", reply, got, sp.Labels)
		}
		// Task labels carry no surrounding space (the config trims them).
		if l1 != l2 && l1 != "" && l1 == strings.TrimSpace(l1) && !strings.Contains(l1, "</think>") {
			if got, err := parseLabel(sp, l1); err == nil && got != l1 {
				t.Fatalf("the reply %q reads as %q", l1, got)
			}
		}
		if span, ok := findSpan(ctx, reply); ok && (span == "" || !strings.Contains(ctx, span)) {
			t.Fatalf("findSpan(%q, %q) = %q, not text of the context", ctx, reply, span)
		}
		// A piece of the context is found in it.
		if n := len(ctx); n > 0 {
			lo, hi = abs(lo)%n, abs(hi)%(n+1)
			if lo > hi {
				lo, hi = hi, lo
			}
			piece := ctx[lo:hi]
			if strings.TrimSpace(piece) != "" && utf8.ValidString(ctx) && utf8.ValidString(piece) && !strings.Contains(piece, "</think>") {
				if _, ok := findSpan(ctx, piece); !ok {
					t.Fatalf("findSpan(%q, %q): a piece of the context is not found", ctx, piece)
				}
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
