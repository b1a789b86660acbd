package release

import "io"

// ReadANLI reads ANLI's published JSONL (Nie et al. 2020; github.com/facebookresearch/anli): one object
// per line with uid, premise, hypothesis and label, e/n/c (or Hugging Face's 0/1/2, or the full words).
// Defaults: premise → context, hypothesis → hypothesis, label → label with e → entailed, n → neutral,
// c → contradictory (the demo NLI task's names); other fields (reason, model_label, ...) go to Metadata.
func ReadANLI(r io.Reader, o ImportOptions) (*Batch, error) {
	return readFlat(r, o, scheme{
		uid: "uid", required: []string{"premise", "hypothesis", "label"}, label: "label",
		fields: map[string]string{"premise": "context", "hypothesis": "hypothesis", "label": "label"},
		labels: map[string]string{
			"e": "entailed", "n": "neutral", "c": "contradictory",
			"entailment": "entailed", "neutral": "neutral", "contradiction": "contradictory",
			"entailed": "entailed", "contradictory": "contradictory",
			"0": "entailed", "1": "neutral", "2": "contradictory",
		},
	})
}

// ReadDynaSent reads DynaSent's published JSONL (Potts et al. 2021; github.com/cgpotts/dynasent): one
// object per line with sentence and gold_label (positive, negative, neutral; null where the annotators
// formed no majority: an error unless SkipUnlabelled), text_id as the uid, and label_distribution, hit_ids
// and the rest kept in Metadata. Defaults: sentence → statement, gold_label → label, labels unchanged
// (the demo sentiment task's names), "mixed" rejected unless mapped.
func ReadDynaSent(r io.Reader, o ImportOptions) (*Batch, error) {
	return readFlat(r, o, scheme{
		uid: "text_id", required: []string{"sentence", "gold_label"}, label: "gold_label",
		fields: map[string]string{"sentence": "statement", "gold_label": "label"},
		labels: map[string]string{"positive": "positive", "negative": "negative", "neutral": "neutral"},
	})
}
