package builtin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// SpanOptions configures TrainSpanModel. Zero values take the defaults noted.
type SpanOptions struct {
	// ContextField and QuestionField name the input fields; by default "context" and "question".
	ContextField, QuestionField string
	// AnswerField and ConfField name the output fields; by default "answer" and "conf".
	AnswerField, ConfField string
	// MaxSpanTokens is the longest answer in words; by default 6.
	MaxSpanTokens int
	// Buckets is the size of the hashed feature space; by default 2^16.
	Buckets int
	// Epochs is the number of passes over the shuffled examples; by default 10.
	Epochs int
	// L2 is the regularisation strength; by default (and when 0) 1e-4.
	L2 float64
	// Seed seeds the shuffling; the same examples and seed give bit-identical weights.
	Seed uint64
}

// SpanModel answers a question with a span of the context: every short window of words inside a sentence is
// a candidate, scored by a linear function of overlap, answer-type and position features, with a softmax
// over the candidates. It is immutable once trained and safe for concurrent use.
type SpanModel struct {
	opts SpanOptions
	w    []float64
}

const (
	maxSpanTokens = 30
	spanRate      = 0.1 // AdaGrad base step, tuned by cross-validation on the demo QA seed set
)

func (o SpanOptions) withDefaults() (SpanOptions, error) {
	o.ContextField = cmp.Or(o.ContextField, "context")
	o.QuestionField = cmp.Or(o.QuestionField, "question")
	o.AnswerField = cmp.Or(o.AnswerField, "answer")
	o.ConfField = cmp.Or(o.ConfField, "conf")
	o.MaxSpanTokens = cmp.Or(o.MaxSpanTokens, 6)
	o.Buckets = cmp.Or(o.Buckets, 1<<16)
	o.Epochs = cmp.Or(o.Epochs, 10)
	o.L2 = cmp.Or(o.L2, 1e-4)
	return o, o.validate()
}

func (o SpanOptions) validate() error {
	switch {
	case o.MaxSpanTokens < 1 || o.MaxSpanTokens > maxSpanTokens:
		return fmt.Errorf("builtin: MaxSpanTokens %d out of range", o.MaxSpanTokens)
	case o.Buckets < 16 || o.Buckets > maxBuckets:
		return fmt.Errorf("builtin: %d buckets out of range", o.Buckets)
	case o.Epochs < 1 || o.Epochs > maxEpochs:
		return fmt.Errorf("builtin: %d epochs out of range", o.Epochs)
	case o.L2 < 0 || math.IsInf(o.L2, 0) || math.IsNaN(o.L2):
		return fmt.Errorf("builtin: bad L2 %v", o.L2)
	}
	return nil
}

// spanExample is one training question: its candidates' features, flattened, and which candidates are
// right.
type spanExample struct {
	feats []feat
	offs  []int // candidate c's features are feats[offs[c]:offs[c+1]]
	gold  []int
}

// TrainSpanModel fits a span model to (context, question) inputs labelled with their answer text. An
// answer that is not exactly a candidate span is matched to the candidates with the best word overlap;
// examples with no candidate overlapping at least half of the answer are skipped.
func TrainSpanModel(ex []TrainingExample, o SpanOptions) (*SpanModel, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &SpanModel{opts: o}
	var train []spanExample
	for i, e := range ex {
		se, err := m.encodeExample(e)
		if err != nil {
			return nil, fmt.Errorf("builtin: example %d: %w", i, err)
		}
		if len(se.gold) > 0 {
			train = append(train, se)
		}
	}
	if len(train) == 0 {
		return nil, errors.New("builtin: no usable training examples")
	}
	m.fit(train)
	return m, nil
}

// fit sets the weights by AdaGrad on the softmax cross-entropy over each example's candidates.
func (m *SpanModel) fit(train []spanExample) {
	opt := newAdagrad(m.opts.Buckets, spanRate, m.opts.L2)
	rng := rand.New(rand.NewPCG(m.opts.Seed, 0x7370_616e_6d6f_646c))
	grad := make([]float64, m.opts.Buckets)
	touched := make([]bool, m.opts.Buckets)
	var order, list []int
	for i := range train {
		order = append(order, i)
	}
	var probs []float64
	for range m.opts.Epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			probs = train[i].scores(opt.w, probs[:0])
			list = train[i].gradient(probs, grad, touched, list[:0])
			for _, idx := range list {
				opt.step(idx, grad[idx])
				grad[idx], touched[idx] = 0, false
			}
		}
	}
	m.w = opt.w
}

// scores appends the softmax probability of each candidate under weights w.
func (se *spanExample) scores(w []float64, out []float64) []float64 {
	for c := range len(se.offs) - 1 {
		var s float64
		for _, f := range se.feats[se.offs[c]:se.offs[c+1]] {
			s += w[f.idx] * f.val
		}
		out = append(out, s)
	}
	softmax(out)
	return out
}

// gradient accumulates the cross-entropy gradient (probability minus target, the target spreading the gold
// candidates' own probability over them) into grad and appends the touched indices to list.
func (se *spanExample) gradient(probs, grad []float64, touched []bool, list []int) []int {
	var goldMass float64
	for _, g := range se.gold {
		goldMass += probs[g]
	}
	gi := 0
	for c, p := range probs {
		d := p
		if gi < len(se.gold) && se.gold[gi] == c {
			d -= p / goldMass
			gi++
		}
		for _, f := range se.feats[se.offs[c]:se.offs[c+1]] {
			if !touched[f.idx] {
				touched[f.idx] = true
				list = append(list, int(f.idx))
			}
			grad[f.idx] += d * f.val
		}
	}
	return list
}

func (m *SpanModel) encodeExample(e TrainingExample) (spanExample, error) {
	p, err := m.read(e.Input)
	if err != nil {
		return spanExample{}, err
	}
	answer := strings.TrimSpace(e.Label)
	var se spanExample
	var texts []string
	buckets := uint64(m.opts.Buckets)
	p.candidates(m.opts.MaxSpanTokens, func(i, j int) {
		se.offs = append(se.offs, len(se.feats))
		p.features(i, j, func(key uint64, val float64) {
			se.feats = append(se.feats, feat{uint32(key % buckets), val})
		})
		texts = append(texts, p.spanText(i, j))
	})
	se.offs = append(se.offs, len(se.feats))
	se.gold = goldCandidates(texts, answer)
	return se, nil
}

// goldCandidates returns the candidates equal to the answer (ignoring case) or, failing that, those with
// the best word-overlap F1 if it is at least 0.5.
func goldCandidates(texts []string, answer string) []int {
	var gold []int
	for c, t := range texts {
		if strings.EqualFold(t, answer) {
			gold = append(gold, c)
		}
	}
	if len(gold) > 0 {
		return gold
	}
	f1s := make([]float64, len(texts))
	best := 0.5
	for c, t := range texts {
		f1s[c] = tokenF1(t, answer)
		best = max(best, f1s[c])
	}
	for c, f := range f1s {
		if f == best {
			gold = append(gold, c)
		}
	}
	return gold
}

// tokenF1 is the SQuAD word-overlap F1 of two strings, lower-cased.
func tokenF1(pred, gold string) float64 {
	pw, gw := words(pred), words(gold)
	if len(pw) == 0 || len(gw) == 0 {
		return 0
	}
	counts := map[string]int{}
	for _, w := range gw {
		counts[w]++
	}
	var same int
	for _, w := range pw {
		if counts[w] > 0 {
			counts[w]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	prec, rec := float64(same)/float64(len(pw)), float64(same)/float64(len(gw))
	return 2 * prec * rec / (prec + rec)
}

// read parses an input into a passage.
func (m *SpanModel) read(input map[string]any) (*passage, error) {
	if input == nil {
		return nil, invalid("input is null")
	}
	c, err := textField(input, m.opts.ContextField)
	if err != nil {
		return nil, err
	}
	q, err := textField(input, m.opts.QuestionField)
	if err != nil {
		return nil, err
	}
	return newPassage(c, q), nil
}

// Predict answers {"answer": the best span of the context, "conf": its softmax probability}. An input
// without the fields as strings, or a context with no words, is a *dynabench.ModelError.
func (m *SpanModel) Predict(ctx context.Context, input map[string]any) (map[string]any, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	p, err := m.read(input)
	if err != nil {
		return nil, err
	}
	var spans [][2]int
	var scores []float64
	buckets := uint64(len(m.w))
	p.candidates(m.opts.MaxSpanTokens, func(i, j int) {
		var s float64
		p.features(i, j, func(key uint64, val float64) { s += m.w[key%buckets] * val })
		spans = append(spans, [2]int{i, j})
		scores = append(scores, s)
	})
	if len(spans) == 0 {
		return nil, invalid("the context has no candidate answer")
	}
	softmax(scores)
	best := argmax(scores)
	return map[string]any{
		m.opts.AnswerField: p.spanText(spans[best][0], spans[best][1]),
		m.opts.ConfField:   scores[best],
	}, nil
}

// PredictBatch answers one output per input, in order; it fails as a whole on the first bad input.
func (m *SpanModel) PredictBatch(ctx context.Context, inputs []map[string]any) ([]map[string]any, error) {
	return predictAll(ctx, inputs, m.Predict)
}

const spanMagic = "dynabench/builtin.SpanModel\n"

// MarshalBinary encodes the model in a versioned binary format.
func (m *SpanModel) MarshalBinary() ([]byte, error) {
	e := &encoder{buf: []byte(spanMagic)}
	e.uvarint(1)
	o := m.opts
	for _, s := range []string{o.ContextField, o.QuestionField, o.AnswerField, o.ConfField} {
		e.str(s)
	}
	e.int(o.MaxSpanTokens)
	e.int(o.Buckets)
	e.int(o.Epochs)
	e.f64(o.L2)
	e.uvarint(o.Seed)
	e.writeRows(m.w, 1)
	return e.buf, nil
}

// UnmarshalSpanModel decodes a model written by MarshalBinary.
func UnmarshalSpanModel(data []byte) (*SpanModel, error) {
	d := &decoder{buf: data}
	d.header(spanMagic, 1)
	var o SpanOptions
	o.ContextField, o.QuestionField, o.AnswerField, o.ConfField = d.str(), d.str(), d.str(), d.str()
	o.MaxSpanTokens = d.int(maxSpanTokens)
	o.Buckets = d.int(maxBuckets)
	o.Epochs = d.int(maxEpochs)
	o.L2 = d.f64()
	o.Seed = d.uvarint()
	if d.err != nil {
		return nil, d.err
	}
	if o.validate() != nil || o.ContextField == "" || o.QuestionField == "" || o.AnswerField == "" || o.ConfField == "" {
		return nil, errCorrupt
	}
	m := &SpanModel{opts: o, w: make([]float64, o.Buckets)}
	d.readRows(m.w, 1)
	if err := d.done(); err != nil {
		return nil, err
	}
	return m, nil
}

// MemoryBytes is the memory the model's weights hold.
func (m *SpanModel) MemoryBytes() int64 { return int64(8 * cap(m.w)) }
