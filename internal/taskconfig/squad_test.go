package taskconfig

import (
	"math"
	"testing"
)

func TestNormalizeAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"The Quick, Brown Fox!", "quick brown fox"},
		{"an apple a day", "apple day"},
		{"theater anthem", "theater anthem"}, // articles only as whole words
		{"A-team", "ateam"},                  // punctuation goes first, as in the script
		{"  cat \t\n sat  ", "cat sat"},
		{"Ça va, the end", "ça va end"},
		{"éa", "éa"},      // é is a letter, so "a" is not a word here
		{"—the—", "— —"},  // non-ASCII punctuation is kept and bounds words
		{"x\x1cy", "x y"}, // Python's split treats U+001C as white space
		{"the a an", ""},  // nothing left
		{"1,000 of the", "1000 of"},
		{"a\u0301 b", "\u0301 b"}, // a combining mark is not a word character for Python's \b
		{"the_a", "thea"},
		{"x\u00a0the\u2003y", "x y"},
	}
	for _, tt := range tests {
		if got := NormalizeAnswer(tt.in); got != tt.want {
			t.Errorf("NormalizeAnswer(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Values worked out by hand: F1 = 2PR/(P+R) on normalised tokens.
func TestSquadF1(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pred, truth string
		want        float64
	}{
		// "cat sat" vs "cat sat down": P = 2/2, R = 2/3, F1 = 0.8.
		{"the cat sat", "a cat sat down", 0.8},
		{"Paris", "paris.", 1},
		{"London", "Paris", 0},
		// "cat cat cat" vs "cat dog": 1 common, P = 1/3, R = 1/2, F1 = 0.4.
		{"cat cat cat", "cat dog", 0.4},
		// "in 1990" vs "1990": P = 1/2, R = 1, F1 = 2/3.
		{"in 1990", "1990", 2.0 / 3},
		// Empty after normalisation: 1 when both are, else 0 (compute_f1).
		{"the", "a", 1},
		{"", "cat", 0},
		{"cat", "", 0},
	}
	for _, tt := range tests {
		if got := SquadF1(tt.pred, tt.truth); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("SquadF1(%q, %q) = %v, want %v", tt.pred, tt.truth, got, tt.want)
		}
	}
}

func TestExactMatch(t *testing.T) {
	t.Parallel()
	if !ExactMatch("The Cat", "cat.") || ExactMatch("cat", "cats") || !ExactMatch("", "the") {
		t.Error("ExactMatch")
	}
}
