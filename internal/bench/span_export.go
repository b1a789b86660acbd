package bench

import "math/rand/v2"

// Span cuts one to three whole words out of s, an answer that occurs in its context: the QA input
// the benchmark writes, for other load generators (internal/soak).
func Span(rng *rand.Rand, s string) string { return span(rng, s) }
