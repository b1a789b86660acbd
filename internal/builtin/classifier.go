package builtin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// ClassifierOptions configures TrainClassifier. Zero values take the defaults noted.
type ClassifierOptions struct {
	// Labels is the label set, in output order; by default the sorted labels of the examples.
	Labels []string
	// TextFields are input fields read as bags of word and character n-grams.
	TextFields []string
	// PremiseField and HypothesisField, when both set, switch on sentence-pair mode (NLI): the hypothesis's
	// n-grams plus cross features between the two.
	PremiseField, HypothesisField string
	// LabelField and ProbField name the output fields; by default "label" and "prob".
	LabelField, ProbField string
	// Buckets is the size of the hashed feature space; by default 2^18.
	Buckets int
	// Epochs is the number of passes over the shuffled examples; by default 10.
	Epochs int
	// L2 is the regularisation strength; by default (and when 0) 1e-4.
	L2 float64
	// Seed seeds the shuffling; the same examples and seed give bit-identical weights.
	Seed uint64
}

// TrainingExample is one labelled input. For QA, Label is the answer text, a substring of the context.
type TrainingExample struct {
	Input map[string]any
	Label string
}

// Classifier is a multinomial logistic regression over hashed n-gram features. It is immutable once trained
// and safe for concurrent use.
type Classifier struct {
	opts ClassifierOptions
	fx   textFeatures
	bias []float64 // per label
	w    []float64 // Buckets rows of len(Labels) columns
}

const (
	defaultBuckets = 1 << 18
	maxBuckets     = 1 << 22
	maxWeights     = 1 << 23 // buckets × labels, bounding a model's memory at 64 MiB
	maxLabels      = 1000
	maxEpochs      = 1000
	classRate      = 0.2 // AdaGrad base step, tuned by cross-validation on the demo seed sets
)

// withDefaults validates o and fills in its defaults from the examples.
func (o ClassifierOptions) withDefaults(ex []TrainingExample) (ClassifierOptions, error) {
	o.Labels = slices.Clone(o.Labels)
	o.TextFields = slices.Clone(o.TextFields)
	if len(o.Labels) == 0 {
		for _, e := range ex {
			o.Labels = append(o.Labels, e.Label)
		}
		slices.Sort(o.Labels)
		o.Labels = slices.Compact(o.Labels)
	}
	o.LabelField = cmp.Or(o.LabelField, "label")
	o.ProbField = cmp.Or(o.ProbField, "prob")
	o.Buckets = cmp.Or(o.Buckets, defaultBuckets)
	o.Epochs = cmp.Or(o.Epochs, 10)
	o.L2 = cmp.Or(o.L2, 1e-4)
	return o, o.validate()
}

func (o ClassifierOptions) validate() error {
	sorted := slices.Clone(o.Labels)
	slices.Sort(sorted)
	switch {
	case len(o.Labels) < 2 || len(o.Labels) > maxLabels:
		return fmt.Errorf("builtin: need 2 to %d labels, have %d", maxLabels, len(o.Labels))
	case slices.Contains(o.Labels, "") || len(slices.Compact(sorted)) != len(o.Labels):
		return errors.New("builtin: labels must be distinct and non-empty")
	case (o.PremiseField == "") != (o.HypothesisField == ""):
		return errors.New("builtin: set both PremiseField and HypothesisField, or neither")
	case len(o.TextFields) == 0 && o.PremiseField == "":
		return errors.New("builtin: no text fields to read")
	case o.Buckets < 16 || o.Buckets > maxBuckets || o.Buckets*len(o.Labels) > maxWeights:
		return fmt.Errorf("builtin: %d buckets out of range", o.Buckets)
	case o.Epochs < 1 || o.Epochs > maxEpochs:
		return fmt.Errorf("builtin: %d epochs out of range", o.Epochs)
	case o.L2 < 0 || math.IsInf(o.L2, 0) || math.IsNaN(o.L2):
		return fmt.Errorf("builtin: bad L2 %v", o.L2)
	}
	return nil
}

// newClassifier returns a classifier without weights.
func newClassifier(o ClassifierOptions) *Classifier {
	return &Classifier{
		opts: o,
		fx:   textFeatures{fields: o.TextFields, premise: o.PremiseField, hypothesis: o.HypothesisField, buckets: o.Buckets},
	}
}

// TrainClassifier fits a classifier to the examples with AdaGrad on the cross-entropy loss, visiting the
// examples in a freshly shuffled order each epoch.
func TrainClassifier(ex []TrainingExample, o ClassifierOptions) (*Classifier, error) {
	if len(ex) == 0 {
		return nil, errors.New("builtin: no training examples")
	}
	o, err := o.withDefaults(ex)
	if err != nil {
		return nil, err
	}
	c := newClassifier(o)
	xs, ys, err := c.encodeExamples(ex)
	if err != nil {
		return nil, err
	}
	k, nw := len(o.Labels), o.Buckets*len(o.Labels)
	opt := newAdagrad(nw+k, classRate, o.L2) // the weight rows, then the biases
	rng := rand.New(rand.NewPCG(o.Seed, 0x6479_6e61_6265_6e63))
	order := make([]int, len(xs))
	probs := make([]float64, k)
	for range o.Epochs {
		for i := range order {
			order[i] = i
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			sgdStep(opt, nw, xs[i], ys[i], probs)
		}
	}
	c.w, c.bias = opt.w[:nw:nw], opt.w[nw:] // the optimiser's weights become the model's
	return c, nil
}

// encodeExamples computes every example's feature vector and label index once, before training.
func (c *Classifier) encodeExamples(ex []TrainingExample) ([][]feat, []int, error) {
	xs := make([][]feat, len(ex))
	ys := make([]int, len(ex))
	for i, e := range ex {
		ys[i] = slices.Index(c.opts.Labels, e.Label)
		if ys[i] < 0 {
			return nil, nil, fmt.Errorf("builtin: example %d: label %q is not one of %q", i, e.Label, c.opts.Labels)
		}
		x, err := c.fx.vector(e.Input)
		if err != nil {
			return nil, nil, fmt.Errorf("builtin: example %d: %w", i, err)
		}
		xs[i] = x
	}
	return xs, ys, nil
}

// sgdStep takes one AdaGrad step on one example of label y. The optimiser's first nw weights are the
// feature rows, one column per label, and the biases follow; probs is scratch space.
func sgdStep(opt *adagrad, nw int, x []feat, y int, probs []float64) {
	k := len(probs)
	scores(opt.w[:nw], opt.w[nw:], x, probs)
	softmax(probs)
	for j := range k {
		d := probs[j]
		if j == y {
			d--
		}
		opt.step(nw+j, d)
		for _, f := range x {
			opt.step(int(f.idx)*k+j, d*f.val)
		}
	}
}

// scores writes bias + w·x for each label into out.
func scores(w, bias []float64, x []feat, out []float64) {
	k := len(out)
	copy(out, bias)
	for _, f := range x {
		row := w[int(f.idx)*k : int(f.idx)*k+k]
		for j, v := range row {
			out[j] += v * f.val
		}
	}
}

// Labels returns the label set in output order.
func (c *Classifier) Labels() []string { return slices.Clone(c.opts.Labels) }

// Predict answers {"label": the most probable label, "prob": {label: probability, ...}}, the probabilities
// summing to 1. An input without the text fields as strings is a *dynabench.ModelError.
func (c *Classifier) Predict(ctx context.Context, input map[string]any) (map[string]any, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	x, err := c.fx.vector(input)
	if err != nil {
		return nil, err
	}
	p := make([]float64, len(c.opts.Labels))
	scores(c.w, c.bias, x, p)
	softmax(p)
	prob := make(map[string]any, len(p))
	for j, l := range c.opts.Labels {
		prob[l] = p[j]
	}
	return map[string]any{c.opts.LabelField: c.opts.Labels[argmax(p)], c.opts.ProbField: prob}, nil
}

// PredictBatch answers one output per input, in order; it fails as a whole on the first bad input.
func (c *Classifier) PredictBatch(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	return predictAll(ctx, inputs, c.Predict)
}

const classifierMagic = "dynabench/builtin.Classifier\n"

// MarshalBinary encodes the classifier in a versioned binary format.
func (c *Classifier) MarshalBinary() ([]byte, error) {
	e := &encoder{buf: []byte(classifierMagic)}
	e.uvarint(1)
	o := c.opts
	e.strs(o.Labels)
	e.strs(o.TextFields)
	for _, s := range []string{o.PremiseField, o.HypothesisField, o.LabelField, o.ProbField} {
		e.str(s)
	}
	e.int(o.Buckets)
	e.int(o.Epochs)
	e.f64(o.L2)
	e.uvarint(o.Seed)
	for _, b := range c.bias {
		e.f64(b)
	}
	e.writeRows(c.w, len(o.Labels))
	return e.buf, nil
}

// UnmarshalClassifier decodes a classifier written by MarshalBinary.
func UnmarshalClassifier(data []byte) (*Classifier, error) {
	d := &decoder{buf: data}
	d.header(classifierMagic, 1)
	var o ClassifierOptions
	o.Labels = d.strs()
	o.TextFields = d.strs()
	o.PremiseField, o.HypothesisField, o.LabelField, o.ProbField = d.str(), d.str(), d.str(), d.str()
	o.Buckets = d.int(maxBuckets)
	o.Epochs = d.int(maxEpochs)
	o.L2 = d.f64()
	o.Seed = d.uvarint()
	if d.err != nil {
		return nil, d.err
	}
	if err := o.validate(); err != nil || o.LabelField == "" || o.ProbField == "" {
		return nil, errCorrupt
	}
	c := newClassifier(o)
	c.bias, c.w = make([]float64, len(o.Labels)), make([]float64, o.Buckets*len(o.Labels))
	for j := range c.bias {
		c.bias[j] = d.f64()
	}
	d.readRows(c.w, len(o.Labels))
	if err := d.done(); err != nil {
		return nil, err
	}
	return c, nil
}

// MemoryBytes is the memory the model's parameters hold (its weights and biases): what the
// leaderboard's memory metric reports for built-in models, counted rather than estimated.
func (c *Classifier) MemoryBytes() int64 { return int64(8 * (cap(c.w) + cap(c.bias))) }
