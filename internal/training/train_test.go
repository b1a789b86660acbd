package training_test

import (
	"bytes"
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/training"
)

// TestTrainDemoTasks trains each demo task's model on its seed set through the config, and checks the
// choice of model, the manifest, that the saved artifact answers as the trained model does, and that
// every answer passes the config's own output check.
func TestTrainDemoTasks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code, kind, features string
		scores               []string
	}{
		{"sentiment", training.KindClassifier, training.FeaturesText, []string{training.ScoreAccuracy, training.ScoreMacroF1}},
		{"nli", training.KindClassifier, training.FeaturesPair, []string{training.ScoreAccuracy, training.ScoreMacroF1}},
		{"qa", training.KindSpan, "", []string{training.ScoreExactMatch, training.ScoreF1}},
		{"hs", training.KindClassifier, training.FeaturesText, []string{training.ScoreAccuracy, training.ScoreMacroF1}},
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			cfg, data := seedData(t, tc.code)
			var stages []string
			a, err := training.Train(ctx, cfg, data, training.Options{Task: tc.code, Seed: 1}, func(stage string, done, total int) {
				if len(stages) == 0 || stages[len(stages)-1] != stage {
					stages = append(stages, stage)
				}
				if total >= 0 && (done < 0 || done > total) {
					t.Errorf("progress %s %d/%d", stage, done, total)
				}
			})
			must(t, err)
			m := a.Manifest
			if m.Kind != tc.kind || m.Hyperparameters.Features != tc.features || m.Task != tc.code || m.Seed != 1 {
				t.Fatalf("manifest: kind %q features %q task %q seed %d", m.Kind, m.Hyperparameters.Features, m.Task, m.Seed)
			}
			wantStages := []string{training.StageSplitting, training.StageTraining, training.StageEvaluating, training.StageSaving}
			if !slices.Equal(stages, wantStages) {
				t.Errorf("stages %q, want %q", stages, wantStages)
			}
			rows := len(data.Examples())
			if m.TrainRows+m.HeldOutRows != rows || m.HeldOutRows < rows/20 || m.HeldOutRows > rows/5 {
				t.Errorf("%d train + %d held-out rows of %d", m.TrainRows, m.HeldOutRows, rows)
			}
			if len(m.Sources) != 1 || m.Sources[0].Rows != rows || m.Sources[0].HeldOut != m.HeldOutRows || len(m.Sources[0].SHA256) != 64 {
				t.Errorf("sources %+v", m.Sources)
			}
			if got := slices.Sorted(maps.Keys(m.HeldOutScores)); !slices.Equal(got, tc.scores) {
				t.Errorf("scores %v, want %v", got, tc.scores)
			}
			t.Logf("%s: %d train, %d held out, scores %v", tc.code, m.TrainRows, m.HeldOutRows, m.HeldOutScores)

			file, err := a.MarshalBinary()
			must(t, err)
			p, loaded, err := training.Load(file)
			must(t, err)
			if !reflect.DeepEqual(*loaded, m) {
				t.Fatalf("loaded manifest differs:\n%+v\n%+v", *loaded, m)
			}
			for _, ex := range data.Examples()[:40] {
				want, err := a.Predictor().Predict(ctx, ex.Input)
				must(t, err)
				got, err := p.Predict(ctx, ex.Input)
				must(t, err)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("loaded model answers %v, trained one %v", got, want)
				}
				if _, problems := cfg.CheckOutput(ex.Input, got); len(problems) > 0 {
					t.Fatalf("the config rejects the model's answer %v: %v", got, problems)
				}
			}
		})
	}
}

// TestTrainDeterministic: the same data and seed give the same model bytes and manifest (but for
// trained_at), and with the same clock the same artifact file.
func TestTrainDeterministic(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"nli", "qa"} {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			cfg, data := seedData(t, code)
			train := func(seed uint64, now func() time.Time) *training.Artifact {
				a, err := training.Train(ctx, cfg, data, training.Options{Task: code, Seed: seed, Now: now, CodeVersion: "test"}, nil)
				must(t, err)
				return a
			}
			a := train(7, time.Now)
			b := train(7, func() time.Time { return time.Now().Add(time.Hour) })
			if !bytes.Equal(a.Model, b.Model) {
				t.Fatal("two trainings with the same seed gave different model bytes")
			}
			ma, mb := a.Manifest, b.Manifest
			if ma.TrainedAt.Equal(mb.TrainedAt) {
				t.Fatal("trained_at is the same; the test proves nothing")
			}
			ma.TrainedAt, mb.TrainedAt = time.Time{}, time.Time{}
			if !reflect.DeepEqual(ma, mb) {
				t.Fatalf("manifests differ beyond trained_at:\n%+v\n%+v", ma, mb)
			}
			fa, _ := train(7, fixedNow).MarshalBinary()
			fb, _ := train(7, fixedNow).MarshalBinary()
			if !bytes.Equal(fa, fb) {
				t.Fatal("artifact files differ with the same clock")
			}
			if other := train(8, fixedNow); bytes.Equal(other.Model, a.Model) {
				t.Fatal("another seed gave the same model bytes")
			}
		})
	}
}

func TestTrainOptions(t *testing.T) {
	t.Parallel()
	cfg, data := seedData(t, "nli")
	a, err := training.Train(ctx, cfg, data, training.Options{HeldOut: -1, Features: training.FeaturesText, Epochs: 3, Buckets: 1 << 12}, nil)
	must(t, err)
	m := a.Manifest
	if m.HeldOutRows != 0 || m.HeldOutScores != nil || m.HeldOutRatio != 0 || m.TrainRows != len(data.Examples()) {
		t.Errorf("no held-out rows: %+v", m)
	}
	hp := m.Hyperparameters
	if hp.Features != training.FeaturesText || !slices.Equal(hp.TextFields, []string{"hypothesis"}) || hp.Epochs != 3 || hp.Buckets != 1<<12 {
		t.Errorf("hyperparameters %+v", hp)
	}
	for _, o := range []training.Options{{HeldOut: 1}, {HeldOut: 1.5}, {Epochs: -1}, {Features: "bag"}, {Buckets: 3}} {
		if _, err := training.Train(ctx, cfg, data, o, nil); !dynabench.IsCode(err, dynabench.EINVALID) {
			t.Errorf("options %+v: %v, want EINVALID", o, err)
		}
	}
	if _, err := training.Train(ctx, cfg, training.Dataset{}, training.Options{}, nil); !dynabench.IsCode(err, dynabench.EINVALID) {
		t.Errorf("no data: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := training.Train(cctx, cfg, data, training.Options{}, nil); err == nil {
		t.Error("a cancelled training succeeded")
	}
}
