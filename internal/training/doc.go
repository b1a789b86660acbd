// Package training trains the platform's built-in models on a task's own data — its demo seed set,
// uploaded JSONL files and the verified examples of its rounds — so that the model in the loop of the
// next round has learnt from the examples that fooled the last one (step 7 of the loop).
//
// Training is deterministic: the same rows and seed give a byte-identical model, and every row's side
// of the held-out split depends only on its own stable key, so adding rows never moves old ones across.
// The result is an Artifact: the built-in model's bytes in a small versioned envelope together with
// its Manifest (what it was trained on, with hashes, how, and how it scored on the held-out rows).
// Load reads an artifact back into a dynabench.Predictor; Handler serves one over Dynabench's model
// protocol.
package training
