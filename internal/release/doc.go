// Package release turns a closed round's verified examples into an immutable, versioned dataset on disk,
// and reads published adversarial datasets back in.
//
// It knows nothing of the database: callers hand it plain Records (one released example each, with raw
// user ids that never leave the package un-hashed) and get back files, bytes and a Manifest.
//
//   - Split assigns an example to train, dev or test from a keyed hash of its id, so a split never
//     changes when examples are added or the release is rebuilt.
//   - Encoders stream records as Dynabench's export JSONL, flat CSV, or Hugging Face datasets rows.
//   - WriteRelease writes a whole release folder (data/{split}.jsonl, a dataset card, a datasheet, the full
//     export and a manifest with the sha256 of every file) atomically: all of it, or nothing.
//   - Every release carries a canary string; FindCanary checks a training file for known canaries.
//   - ReadANLI, ReadDynaSent and ReadSQuAD import the published shapes of existing adversarial datasets.
package release
