// Package simulate runs scripted annotators through the adversarial loop, deterministically for a seed:
// writers that exploit what bag-of-n-gram models get wrong (negation, numbers, word overlap, contrast,
// double negation), and validators who agree with the gold label. Run drives them through a Loop, which
// the caller implements over the real API (or anything else), and reports MER and vMER per round.
package simulate
