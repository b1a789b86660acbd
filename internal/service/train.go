package service

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/blob"
	"github.com/dynabench-go/dynabench/internal/builtin"
	"github.com/dynabench-go/dynabench/internal/taskconfig"
	"github.com/dynabench-go/dynabench/internal/training"
)

// TrainRequest asks for a built-in model trained on a task's data.
type TrainRequest struct {
	Name     string
	Rounds   []int // rounds whose verified examples to train on
	SeedData bool  // also the task's seed set, when it has one (the demo tasks do)
	// ReleasedOnly trains only on the train splits of released rounds, so the model never sees an
	// example of a round's dev or test split (which it will be scored on).
	ReleasedOnly bool
	Seed         uint64
	Publish      bool
}

// Trainer is what TrainModel needs beyond the store: where artifacts go and a task's seed data.
type Trainer struct {
	Blobs blob.Store
	// SeedData returns a task's seed training set, if it has one.
	SeedData func(taskCode string) ([]builtin.TrainingExample, bool)
	Version  string
}

// TrainModel trains a built-in model on the requested data (owners), stores the artifact and
// registers the model; the manifest keeps the sources, hashes, seed and held-out scores.
func (s *Service) TrainModel(ctx context.Context, actor *dynabench.User, code string, req TrainRequest) (*dynabench.Model, *dynabench.ModelArtifact, error) {
	t, err := s.Task(ctx, code)
	if err != nil {
		return nil, nil, err
	}
	if err := s.requireOwner(ctx, actor, t); err != nil {
		return nil, nil, err
	}
	if s.Trainer == nil || s.Trainer.Blobs == nil {
		return nil, nil, dynabench.Errorf(dynabench.EUNAVAILABLE, "this server has no blob store for trained models")
	}
	if !modelNameRE.MatchString(req.Name) {
		return nil, nil, dynabench.FieldErrorf(dynabench.EINVALID, "name", "1 to 100 letters, digits, '_', '.', ':' or '-'")
	}
	cfg, err := s.Config(t)
	if err != nil {
		return nil, nil, err
	}
	data, err := s.trainingData(ctx, t, cfg, req)
	if err != nil {
		return nil, nil, err
	}
	a, err := training.Train(ctx, cfg, data, training.Options{Task: t.Code, Seed: req.Seed, CodeVersion: s.Trainer.Version}, nil)
	if err != nil {
		if dynabench.ErrorCode(err) != dynabench.EINTERNAL {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("train %s: %w", t.Code, err)
	}
	m := &dynabench.Model{TaskID: t.ID, UserID: actor.ID, Name: req.Name, Published: req.Publish,
		Card: fmt.Sprintf("Built-in %s trained on %d examples (%s).", a.Manifest.Kind, a.Manifest.TrainRows, sourceNames(data))}
	rec, err := training.Register(ctx, s.Store, s.Trainer.Blobs, a, m)
	if err != nil {
		return nil, nil, err
	}
	if err := s.queueModel(ctx, t, m); err != nil {
		return nil, nil, err
	}
	return m, rec, nil
}

func (s *Service) trainingData(ctx context.Context, t *dynabench.Task, cfg *taskconfig.Config, req TrainRequest) (training.Dataset, error) {
	var data training.Dataset
	if req.SeedData {
		seed, ok := []builtin.TrainingExample(nil), false
		if s.Trainer.SeedData != nil {
			seed, ok = s.Trainer.SeedData(t.Code)
		}
		if !ok {
			return data, dynabench.FieldErrorf(dynabench.EINVALID, "seed_data", "task %s has no seed set", t.Code)
		}
		src, err := training.SeedSource("seed", cfg, seed)
		if err != nil {
			return data, err
		}
		data.Sources = append(data.Sources, src)
	}
	var rounds []*dynabench.Round
	for i, n := range req.Rounds {
		if slices.Contains(req.Rounds[:i], n) {
			return data, dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("rounds[%d]", i), "round %d listed twice", n)
		}
		r, err := s.Round(ctx, t, n)
		if err != nil {
			return data, dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("rounds[%d]", i), "task %s has no round %d", t.Code, n)
		}
		rounds = append(rounds, r)
	}
	if len(rounds) > 0 {
		srcs, err := training.RoundSources(ctx, s.Store, cfg, rounds, nil)
		if err != nil {
			return data, err
		}
		if req.ReleasedOnly {
			keep, released, err := s.releasedTrainFilter(ctx, t)
			if err != nil {
				return data, err
			}
			for i, r := range rounds {
				if !slices.Contains(released, r.Number) {
					return data, dynabench.FieldErrorf(dynabench.EINVALID, fmt.Sprintf("rounds[%d]", i),
						"round %d is not released: release it first, or train without released_only", r.Number)
				}
				src := &srcs[i]
				kept := src.Examples[:0]
				for _, ex := range src.Examples {
					id, err := strconv.ParseInt(strings.TrimPrefix(ex.Key, "example:"), 10, 64)
					if err == nil && keep(r.Number, id) {
						kept = append(kept, ex)
					}
				}
				src.Examples, src.Name = kept, src.Name+":train"
			}
		}
		data.Sources = append(data.Sources, srcs...)
	}
	if len(data.Examples()) == 0 {
		return data, dynabench.FieldErrorf(dynabench.EINVALID, "rounds", "no training data: the rounds have no verified examples and no seed set was asked for")
	}
	return data, nil
}

func sourceNames(d training.Dataset) string {
	out := ""
	for i, s := range d.Sources {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s: %d", s.Name, len(s.Examples))
	}
	return out
}
