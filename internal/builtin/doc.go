// Package builtin holds the platform's built-in baseline models: a hashed n-gram logistic-regression
// classifier for label tasks (with premise/hypothesis pair features for NLI) and a linear extractive span
// scorer for question answering.
//
// They are pure Go, train in-process in well under a second on a few hundred examples, predict in
// microseconds, and are deterministic: the same examples and seed give bit-identical weights. They are
// deliberately weak: bags of n-grams and overlap cues that a careful annotator can fool with negation,
// sarcasm or a changed number, which is what a dynamic-adversarial round needs. A trained model is immutable,
// so Predict is safe for concurrent use.
package builtin
