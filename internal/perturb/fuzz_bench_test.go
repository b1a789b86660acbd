package perturb

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzPerturb: arbitrary text never panics; valid UTF-8 in gives valid
// UTF-8 out; invalid UTF-8 is returned untouched; results are
// deterministic; changed is exactly out != in; Derive's copies always
// differ from their original and keep the anchors.
func FuzzPerturb(f *testing.F) {
	for _, s := range samples {
		f.Add(s, uint64(1), "he")
	}
	f.Add("He isn't here; John's dad can't receive it.", uint64(7), "John")
	f.Add("\xff\xfe he", uint64(0), "")
	f.Fuzz(func(t *testing.T, text string, seed uint64, anchor string) {
		for _, p := range all {
			a, ca := p.Apply(text, RNG(seed, p.Name(), "k", "f"))
			b, cb := p.Apply(text, RNG(seed, p.Name(), "k", "f"))
			if a != b || ca != cb {
				t.Fatalf("%s: not deterministic on %q: %q vs %q", p.Name(), text, a, b)
			}
			if ca != (a != text) {
				t.Fatalf("%s: changed=%v for %q -> %q", p.Name(), ca, text, a)
			}
			if utf8.ValidString(text) && !utf8.ValidString(a) {
				t.Fatalf("%s: invalid UTF-8 out of %q: %q", p.Name(), text, a)
			}
			if !utf8.ValidString(text) && a != text {
				t.Fatalf("%s: invalid input changed", p.Name())
			}
		}
		ex := Example{UID: "u", Fields: map[string]string{"t": text, "p": text},
			Protected: map[string]bool{"p": true}, Anchors: []string{anchor}}
		for _, kind := range []string{KindRobustness, KindFairness} {
			for _, d := range Derive([]Example{ex}, kind, seed) {
				if d.Fields["t"] == text || d.Fields["p"] != text || d.OriginalUID != "u" {
					t.Fatalf("%s: bad derived %+v", d.UID, d)
				}
				if anchor != "" && strings.Count(d.Fields["t"], anchor) != strings.Count(text, anchor) {
					t.Fatalf("%s: anchor %q count changed", d.UID, anchor)
				}
			}
		}
	})
}

// benchSentences makes n short deterministic sentences from a small
// vocabulary mixing the words the perturbations look for.
func benchSentences(n int) []string {
	vocab := strings.Fields(`the a cat dog he she his her man woman John Mary Priya Omar
		do not don't can't it is receive believe until quick brown jumps over lazy
		river city because tomorrow friend very , . ! ?`)
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		k := 6 + rng.IntN(10)
		ws := make([]string, k)
		for j := range ws {
			ws[j] = vocab[rng.IntN(len(vocab))]
		}
		out[i] = strings.Join(ws, " ") + "."
	}
	return out
}

// BenchmarkPerturb reports perturbations per second over 10k short
// sentences, for each perturbation and for Apply (hashing the rng seed
// included).
func BenchmarkPerturb(b *testing.B) {
	sents := benchSentences(10000)
	for _, p := range all {
		b.Run(p.Name(), func(b *testing.B) {
			n := 0
			for b.Loop() {
				for i, s := range sents {
					p.Apply(s, RNG(1, p.Name(), fmt.Sprint(i), "text"))
					n++
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "perturbations/s")
		})
	}
	b.Run("Apply_all", func(b *testing.B) {
		keys := make([]string, len(sents))
		for i := range keys {
			keys[i] = fmt.Sprint("uid-", i)
		}
		n := 0
		for b.Loop() {
			for i, s := range sents {
				for _, p := range all {
					Apply(map[string]string{"text": s}, p, 1, keys[i])
					n++
				}
			}
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "perturbations/s")
	})
}
