package training

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/builtin"
	"github.com/dynabench-go/dynabench/internal/demo"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
)

// Progress is told each stage of a training as it goes: done of total units (rows, or 0 then 1 for
// a step that cannot report inside itself); total < 0 means unknown.
type Progress = func(stage string, done, total int)

// Stages of a training, in order.
const (
	StageLoading    = "loading"    // reading the rounds' examples from the database (RoundSources)
	StageSplitting  = "splitting"  // assigning rows to the training or held-out side
	StageTraining   = "training"   // the built-in trainer: all epochs in one call, so only 0/1 and 1/1
	StageEvaluating = "evaluating" // predicting the held-out rows, counted row by row
	StageSaving     = "saving"     // encoding the artifact
)

// Options tune Train. Zero values take the defaults noted.
type Options struct {
	Task string // the task's code, recorded in the manifest
	// Seed seeds the trainer's shuffling; 0 is a seed like any other.
	Seed uint64
	// HeldOut is the share of rows held out for scoring: DefaultHeldOut when 0, none when negative.
	HeldOut float64
	// Features chooses the classifier's features: FeaturesAuto (default), FeaturesText or FeaturesPair.
	Features string
	// Epochs, Buckets, L2 and MaxSpanTokens are the built-in trainers' hyperparameters; by default 10
	// epochs, 2^18 buckets for the classifier and 2^16 for the span model, L2 1e-4, spans of up to 6
	// words.
	Epochs, Buckets int
	L2              float64
	MaxSpanTokens   int
	// CodeVersion names the code that trained the model (the binary's version); "dev" by default.
	CodeVersion string
	// Now is the clock for the manifest's TrainedAt; time.Now by default.
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	switch {
	case o.HeldOut == 0:
		o.HeldOut = DefaultHeldOut
	case o.HeldOut < 0:
		o.HeldOut = 0
	case o.HeldOut >= 1 || math.IsNaN(o.HeldOut):
		return o, dynabench.FieldErrorf(dynabench.EINVALID, "heldout", "must be below 1, not %v", o.HeldOut)
	}
	if o.Epochs < 0 || o.Buckets < 0 || o.L2 < 0 || o.MaxSpanTokens < 0 || math.IsNaN(o.L2) {
		return o, dynabench.Errorf(dynabench.EINVALID, "hyperparameters must not be negative")
	}
	o.Epochs = cmp.Or(o.Epochs, 10)
	o.L2 = cmp.Or(o.L2, 1e-4)
	o.MaxSpanTokens = cmp.Or(o.MaxSpanTokens, 6)
	o.CodeVersion = cmp.Or(o.CodeVersion, "dev")
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Train trains the built-in model the config calls for (see planFor: a classifier for a multiclass
// target, pair features for NLI-shaped configs; the span model for a QA selection) on the dataset's
// training rows, scores it on the held-out rows, and returns it as an artifact. The same data, config
// and options give the same model bytes and the same manifest but for TrainedAt.
//
// ctx is checked between stages and during evaluation; the built-in trainer itself runs to the end
// once started. Errors are EINVALID for data or options the model cannot train on.
func Train(ctx context.Context, cfg *taskconfig.Config, data Dataset, opts Options, progress func(stage string, done, total int)) (*Artifact, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	rows := data.Examples()
	if len(rows) == 0 {
		return nil, dynabench.Errorf(dynabench.EINVALID, "no training rows: give seed data, a data file or rounds with verified examples")
	}
	p, err := planFor(cfg, rows, opts.Features)
	if err != nil {
		return nil, err
	}
	report(progress, StageSplitting, 0, len(rows))
	train, held := Split(rows, opts.HeldOut)
	report(progress, StageSplitting, len(rows), len(rows))
	if len(train) == 0 {
		return nil, dynabench.Errorf(dynabench.EINVALID, "all %d rows were held out; give more data or a smaller held-out share", len(rows))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	report(progress, StageTraining, 0, 1)
	predictor, model, hp, err := fit(p, train, opts)
	if err != nil {
		return nil, err
	}
	report(progress, StageTraining, 1, 1)
	scores, failures, err := evaluate(ctx, p, predictor, held, progress)
	if err != nil {
		return nil, err
	}
	report(progress, StageSaving, 0, 1)
	sum := sha256.Sum256(model)
	cfgSum := sha256.Sum256([]byte(cfg.Source))
	a := &Artifact{Model: model, predictor: predictor, Manifest: Manifest{
		FormatVersion: FormatVersion, Kind: p.kind, Model: modelName(p.kind), Task: opts.Task,
		ConfigSHA256: hex.EncodeToString(cfgSum[:]), Labels: p.labels, Sources: sourceInfos(data, opts.HeldOut),
		Seed: opts.Seed, Hyperparameters: hp, HeldOutRatio: opts.HeldOut, TrainRows: len(train), HeldOutRows: len(held),
		HeldOutScores: scores, HeldOutFailures: failures, ModelSHA256: hex.EncodeToString(sum[:]),
		CodeVersion: opts.CodeVersion, TrainedAt: opts.Now().UTC(),
	}}
	report(progress, StageSaving, 1, 1)
	return a, nil
}

func report(progress Progress, stage string, done, total int) {
	if progress != nil {
		progress(stage, done, total)
	}
}

func modelName(kind string) string {
	if kind == KindSpan {
		return demo.SpanModelName
	}
	return demo.ClassifierModelName
}

// fit runs the built-in trainer and returns the model, its encoding and the hyperparameters it used.
func fit(p plan, rows []Example, o Options) (dynabench.Predictor, []byte, Hyperparameters, error) {
	ex := make([]builtin.TrainingExample, len(rows))
	for i, r := range rows {
		ex[i] = builtin.TrainingExample{Input: r.Input, Label: r.Label}
	}
	hp := Hyperparameters{OutputField: p.target.Name, ScoreField: p.score, Epochs: o.Epochs, L2: o.L2}
	var m interface {
		dynabench.Predictor
		MarshalBinary() ([]byte, error)
	}
	var err error
	if p.kind == KindSpan {
		hp.ContextField, hp.QuestionField = p.contextField, p.questionField
		hp.Buckets, hp.MaxSpanTokens = cmp.Or(o.Buckets, 1<<16), o.MaxSpanTokens
		m, err = builtin.TrainSpanModel(ex, builtin.SpanOptions{ContextField: hp.ContextField, QuestionField: hp.QuestionField,
			AnswerField: hp.OutputField, ConfField: hp.ScoreField, MaxSpanTokens: hp.MaxSpanTokens, Buckets: hp.Buckets,
			Epochs: hp.Epochs, L2: hp.L2, Seed: o.Seed})
	} else {
		hp.Features, hp.TextFields, hp.PremiseField, hp.HypothesisField = p.features, p.textFields, p.premise, p.hypothesis
		hp.Buckets = cmp.Or(o.Buckets, 1<<18)
		m, err = builtin.TrainClassifier(ex, builtin.ClassifierOptions{Labels: p.labels, TextFields: hp.TextFields,
			PremiseField: hp.PremiseField, HypothesisField: hp.HypothesisField, LabelField: hp.OutputField, ProbField: hp.ScoreField,
			Buckets: hp.Buckets, Epochs: hp.Epochs, L2: hp.L2, Seed: o.Seed})
	}
	if err != nil {
		return nil, nil, hp, dynabench.Errorf(dynabench.EINVALID, "cannot train the %s: %v", p, err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		return nil, nil, hp, fmt.Errorf("training: encode model: %w", err)
	}
	return m, b, hp, nil
}

// evaluate predicts every held-out row and scores the answers; a row the model cannot read counts as a
// wrong answer and as a failure.
func evaluate(ctx context.Context, p plan, m dynabench.Predictor, rows []Example, progress Progress) (map[string]float64, int, error) {
	gold, pred := make([]string, len(rows)), make([]string, len(rows))
	failures := 0
	every := max(1, len(rows)/100)
	report(progress, StageEvaluating, 0, len(rows))
	for i, r := range rows {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		gold[i] = r.Label
		out, err := m.Predict(ctx, r.Input)
		if err != nil {
			failures++
			continue
		}
		pred[i], _ = out[p.target.Name].(string)
		if (i+1)%every == 0 {
			report(progress, StageEvaluating, i+1, len(rows))
		}
	}
	report(progress, StageEvaluating, len(rows), len(rows))
	if p.kind == KindSpan {
		return answerScores(gold, pred), failures, nil
	}
	return labelScores(gold, pred), failures, nil
}

func sourceInfos(data Dataset, ratio float64) []SourceInfo {
	out := make([]SourceInfo, len(data.Sources))
	for i, s := range data.Sources {
		out[i] = SourceInfo{Name: s.Name, Rows: len(s.Examples), Skipped: s.Skipped, SHA256: sourceHash(s)}
		for _, ex := range s.Examples {
			if IsHeldOut(ex.Key, ratio) {
				out[i].HeldOut++
			}
		}
	}
	return out
}
