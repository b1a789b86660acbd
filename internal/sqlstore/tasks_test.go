package sqlstore_test

import (
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
)

func TestTasks(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		nli := &dynabench.Task{Code: "nli", Name: "NLI", Description: "Natural language inference",
			ConfigSource: "aggregation_metric:\n  type: dynascore\nunknown_key: kept # comment kept\n",
			Settings: dynabench.TaskSettings{NumMatchingValidations: 5, ValidateNonFooling: true,
				ContextStrategy: dynabench.StrategyUniform, MaxExamplesPerDay: 40, Hidden: true, ModelTimeoutMS: 900}}
		must(t, s.CreateTask(ctx, nli))
		if nli.ID == 0 || nli.ConfigRev != 1 || !nli.CreatedAt.Equal(millis(testNow)) {
			t.Fatalf("created: %+v", nli)
		}
		bare := &dynabench.Task{Code: "qa", Name: "QA"}
		must(t, s.CreateTask(ctx, bare))
		want := *nli
		want.CreatedAt = millis(testNow)
		wantBare := dynabench.Task{ID: bare.ID, Code: "qa", Name: "QA", ConfigRev: 1, CreatedAt: millis(testNow),
			Settings: dynabench.TaskSettings{NumMatchingValidations: 3, ContextStrategy: dynabench.StrategyLeastUsed, ModelTimeoutMS: 5000}}

		t.Run("find", func(t *testing.T) {
			got, err := s.FindTaskByCode(ctx, "nli")
			must(t, err)
			wantEqual(t, "by code", got, &want)
			got, err = s.FindTaskByID(ctx, nli.ID)
			must(t, err)
			wantEqual(t, "by id", got, &want)
			got, err = s.FindTaskByID(ctx, bare.ID)
			must(t, err)
			wantEqual(t, "defaults filled", got, &wantBare)
			all, err := s.FindTasks(ctx)
			must(t, err)
			wantEqual(t, "all in creation order", all, []*dynabench.Task{&want, &wantBare})
			_, err = s.FindTaskByCode(ctx, "nope")
			wantCode(t, err, dynabench.ENOTFOUND)
			_, err = s.FindTaskByID(ctx, bare.ID+1000)
			wantCode(t, err, dynabench.ENOTFOUND)
		})

		t.Run("conflict", func(t *testing.T) {
			wantCode(t, s.CreateTask(ctx, &dynabench.Task{Code: "nli", Name: "again"}), dynabench.ECONFLICT)
		})

		t.Run("config", func(t *testing.T) {
			must(t, s.UpdateTaskConfig(ctx, nli.ID, "v2"))
			must(t, s.UpdateTaskConfig(ctx, nli.ID, "v3"))
			got, err := s.FindTaskByID(ctx, nli.ID)
			must(t, err)
			if got.ConfigSource != "v3" || got.ConfigRev != 3 {
				t.Fatalf("config %q rev %d, want v3 rev 3", got.ConfigSource, got.ConfigRev)
			}
			other, err := s.FindTaskByID(ctx, bare.ID)
			must(t, err)
			if other.ConfigRev != 1 {
				t.Fatalf("other task's rev moved to %d", other.ConfigRev)
			}
			wantCode(t, s.UpdateTaskConfig(ctx, bare.ID+1000, "x"), dynabench.ENOTFOUND)
		})

		t.Run("settings", func(t *testing.T) {
			st := dynabench.TaskSettings{NumMatchingValidations: 1, ContextStrategy: dynabench.StrategyValidationFailed,
				MaxExamplesPerDay: 0, ModelTimeoutMS: 100}
			must(t, s.UpdateTaskSettings(ctx, bare.ID, st))
			got, err := s.FindTaskByID(ctx, bare.ID)
			must(t, err)
			wantEqual(t, "settings", got.Settings, st)
			must(t, s.UpdateTaskSettings(ctx, bare.ID, dynabench.TaskSettings{}))
			got, err = s.FindTaskByID(ctx, bare.ID)
			must(t, err)
			wantEqual(t, "settings reset to defaults", got.Settings, wantBare.Settings)
			wantCode(t, s.UpdateTaskSettings(ctx, bare.ID+1000, st), dynabench.ENOTFOUND)
		})

		t.Run("owners", func(t *testing.T) {
			u, v := e.user(t), e.user(t)
			ok, err := s.IsTaskOwner(ctx, nli.ID, u.ID)
			must(t, err)
			if ok {
				t.Fatal("owner before AddTaskOwner")
			}
			must(t, s.AddTaskOwner(ctx, nli.ID, u.ID))
			must(t, s.AddTaskOwner(ctx, nli.ID, u.ID)) // twice is fine
			for _, c := range []struct {
				task, user int64
				want       bool
			}{{nli.ID, u.ID, true}, {nli.ID, v.ID, false}, {bare.ID, u.ID, false}} {
				ok, err := s.IsTaskOwner(ctx, c.task, c.user)
				must(t, err)
				if ok != c.want {
					t.Errorf("IsTaskOwner(%d, %d) = %v, want %v", c.task, c.user, ok, c.want)
				}
			}
			wantCode(t, s.AddTaskOwner(ctx, bare.ID+1000, u.ID), dynabench.ENOTFOUND)
			wantCode(t, s.AddTaskOwner(ctx, nli.ID, v.ID+1000), dynabench.ENOTFOUND)
		})
	})
}

func TestModels(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		u := e.user(t)
		tk, other := e.task(t), e.task(t)
		m := &dynabench.Model{TaskID: tk.ID, UserID: u.ID, Name: "roberta", Kind: dynabench.KindOpenAI,
			URL: "https://models.example.org/v1", Card: "# Card\n\nÜnïcode ✓",
			Options:   map[string]any{"model": "gpt", "temperature": 0.5, "stop": []any{"\n", "###"}, "nested": map[string]any{"on": true, "nil": nil}},
			Published: true}
		must(t, s.CreateModel(ctx, m))
		bare := &dynabench.Model{TaskID: tk.ID, UserID: u.ID, Name: "bare", Kind: dynabench.KindBuiltin}
		must(t, s.CreateModel(ctx, bare))
		elsewhere := e.model(t, other.ID, u.ID)
		want := *m
		want.CreatedAt = millis(testNow)
		wantBare := *bare
		wantBare.CreatedAt, wantBare.Options = millis(testNow), map[string]any{}

		got, err := s.FindModelByID(ctx, m.ID)
		must(t, err)
		wantEqual(t, "model", got, &want)
		all, err := s.FindModels(ctx, tk.ID)
		must(t, err)
		wantEqual(t, "task's models", all, []*dynabench.Model{&want, &wantBare})
		all, err = s.FindModels(ctx, other.ID)
		must(t, err)
		wantEqual(t, "other task's models", ids(all, func(m *dynabench.Model) int64 { return m.ID }), []int64{elsewhere.ID})
		_, err = s.FindModelByID(ctx, elsewhere.ID+1000)
		wantCode(t, err, dynabench.ENOTFOUND)
		wantCode(t, s.CreateModel(ctx, &dynabench.Model{TaskID: tk.ID + 1000, UserID: u.ID, Name: "x", Kind: "builtin"}), dynabench.ENOTFOUND)
		wantCode(t, s.CreateModel(ctx, &dynabench.Model{TaskID: tk.ID, UserID: u.ID + 1000, Name: "x", Kind: "builtin"}), dynabench.ENOTFOUND)
	})
}

func TestRounds(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		u := e.user(t)
		tk := e.task(t)
		m1, m2, m3 := e.model(t, tk.ID, u.ID), e.model(t, tk.ID, u.ID), e.model(t, tk.ID, u.ID)

		r1 := &dynabench.Round{TaskID: tk.ID, Number: 1, Secret: "0123abcd", ModelIDs: []int64{m3.ID, m1.ID}}
		must(t, s.CreateRound(ctx, r1))
		if r1.ID == 0 || r1.Status != dynabench.RoundOpen || !r1.CreatedAt.Equal(millis(testNow)) {
			t.Fatalf("created: %+v", r1)
		}
		want1 := dynabench.Round{ID: r1.ID, TaskID: tk.ID, Number: 1, Status: dynabench.RoundOpen, Secret: "0123abcd",
			ModelIDs: []int64{m3.ID, m1.ID}, LoopMode: dynabench.LoopRandom, CreatedAt: millis(testNow)}

		t.Run("create makes it current", func(t *testing.T) {
			got, err := s.FindTaskByID(ctx, tk.ID)
			must(t, err)
			if got.CurrentRound != 1 {
				t.Fatalf("current round = %d, want 1", got.CurrentRound)
			}
			r, err := s.FindRound(ctx, tk.ID, 1)
			must(t, err)
			wantEqual(t, "by number (models in the given order)", r, &want1)
			r, err = s.FindRoundByID(ctx, r1.ID)
			must(t, err)
			wantEqual(t, "by id", r, &want1)
		})

		r2 := &dynabench.Round{TaskID: tk.ID, Number: 2, Secret: "s2"}
		must(t, s.CreateRound(ctx, r2))
		want2 := dynabench.Round{ID: r2.ID, TaskID: tk.ID, Number: 2, Status: dynabench.RoundOpen, Secret: "s2",
			ModelIDs: []int64{}, LoopMode: dynabench.LoopRandom, CreatedAt: millis(testNow)}

		t.Run("list", func(t *testing.T) {
			got, err := s.FindTaskByID(ctx, tk.ID)
			must(t, err)
			if got.CurrentRound != 2 {
				t.Fatalf("current round = %d, want 2", got.CurrentRound)
			}
			rs, err := s.FindRounds(ctx, tk.ID)
			must(t, err)
			wantEqual(t, "rounds", rs, []*dynabench.Round{&want1, &want2})
			rs, err = s.FindRounds(ctx, tk.ID+1000)
			must(t, err)
			if len(rs) != 0 {
				t.Fatalf("rounds of no task: %v", rs)
			}
		})

		t.Run("errors leave nothing behind", func(t *testing.T) {
			wantCode(t, s.CreateRound(ctx, &dynabench.Round{TaskID: tk.ID, Number: 2, Secret: "x"}), dynabench.ECONFLICT)
			// The round row is written before its models: an unknown model must undo it and the
			// current-round change.
			wantCode(t, s.CreateRound(ctx, &dynabench.Round{TaskID: tk.ID, Number: 3, ModelIDs: []int64{m1.ID, m3.ID + 1000}}), dynabench.ENOTFOUND)
			_, err := s.FindRound(ctx, tk.ID, 3)
			wantCode(t, err, dynabench.ENOTFOUND)
			got, err := s.FindTaskByID(ctx, tk.ID)
			must(t, err)
			if got.CurrentRound != 2 {
				t.Fatalf("current round = %d after a failed CreateRound, want 2", got.CurrentRound)
			}
			wantCode(t, s.CreateRound(ctx, &dynabench.Round{TaskID: tk.ID + 1000, Number: 1}), dynabench.ENOTFOUND)
			_, err = s.FindRound(ctx, tk.ID, 9)
			wantCode(t, err, dynabench.ENOTFOUND)
			_, err = s.FindRoundByID(ctx, r2.ID+1000)
			wantCode(t, err, dynabench.ENOTFOUND)
		})

		t.Run("set models replaces", func(t *testing.T) {
			for _, list := range [][]int64{{m1.ID}, {m2.ID, m3.ID, m1.ID}, {}, {m3.ID, m2.ID}} {
				must(t, s.SetRoundModels(ctx, r1.ID, list))
				r, err := s.FindRoundByID(ctx, r1.ID)
				must(t, err)
				wantEqual(t, "models", r.ModelIDs, list)
			}
			wantCode(t, s.SetRoundModels(ctx, r1.ID, []int64{m1.ID, m1.ID + 1000}), dynabench.ENOTFOUND)
			wantCode(t, s.SetRoundModels(ctx, r1.ID, []int64{m1.ID, m1.ID}), dynabench.ECONFLICT)
			r, err := s.FindRoundByID(ctx, r1.ID)
			must(t, err)
			wantEqual(t, "models after refused replacements", r.ModelIDs, []int64{m3.ID, m2.ID})
			r, err = s.FindRoundByID(ctx, r2.ID)
			must(t, err)
			wantEqual(t, "other round's models", r.ModelIDs, []int64{})
		})

		t.Run("close", func(t *testing.T) {
			at := testNow.Add(90*time.Minute + 999_999) // sub-millisecond, not UTC
			must(t, s.CloseRound(ctx, r1.ID, at))
			r, err := s.FindRoundByID(ctx, r1.ID)
			must(t, err)
			if r.Status != dynabench.RoundClosed || r.ClosedAt == nil || *r.ClosedAt != millis(at) {
				t.Fatalf("closed round: status %q closed_at %v, want %v", r.Status, r.ClosedAt, millis(at))
			}
			r, err = s.FindRoundByID(ctx, r2.ID)
			must(t, err)
			if r.Status != dynabench.RoundOpen || r.ClosedAt != nil {
				t.Fatalf("other round: status %q closed_at %v", r.Status, r.ClosedAt)
			}
			wantCode(t, s.CloseRound(ctx, r2.ID+1000, at), dynabench.ENOTFOUND)
		})
	})
}

func TestRoundLoopMode(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		r := e.round(t, e.task(t))
		got, err := e.s.FindRoundByID(ctx, r.ID)
		must(t, err)
		if got.LoopMode != dynabench.LoopRandom {
			t.Fatalf("new round loop mode %q, want random", got.LoopMode)
		}
		must(t, e.s.SetRoundLoopMode(ctx, r.ID, dynabench.LoopVote))
		got, err = e.s.FindRoundByID(ctx, r.ID)
		must(t, err)
		if got.LoopMode != dynabench.LoopVote {
			t.Fatalf("loop mode %q after setting vote", got.LoopMode)
		}
		if err := e.s.SetRoundLoopMode(ctx, r.ID+1000, dynabench.LoopMean); !dynabench.IsCode(err, dynabench.ENOTFOUND) {
			t.Fatalf("unknown round: %v, want not found", err)
		}
	})
}
