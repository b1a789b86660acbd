package api_test

import (
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
)

func vote(label string) map[string]any { return map[string]any{"label": label} }

func TestValidations(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		e.newTask(t, "val", sentimentConfig, nil, servertest.Says("positive", sentimentLabels...), 4)
		next := "/api/v1/tasks/val/validations/next"
		e.run(t, []scenario{
			{name: "nothing to validate yet", method: "GET", path: next, who: "bob", status: 204},
			{name: "anonymous", method: "GET", path: next, status: 401},
			{name: "unknown task", method: "GET", path: "/api/v1/tasks/nope/validations/next", who: "bob", status: 404},
			{name: "unknown round", method: "GET", path: next + "?round=9", who: "bob", status: 404, want: map[string]any{"error.field": "round"}},
			// A, B and C fool the model; D does not.
			{name: "A", method: "POST", path: "/api/v1/tasks/val/examples", who: "alice", body: ex("val.c1", "Statement A.", "negative"),
				status: 201, want: map[string]any{"example.model_wrong": true}, save: map[string]string{"A": "example.id"}},
			{name: "B", method: "POST", path: "/api/v1/tasks/val/examples", who: "alice", body: ex("val.c2", "Statement B.", "negative"),
				status: 201, want: map[string]any{"example.model_wrong": true}, save: map[string]string{"B": "example.id"}},
			{name: "C", method: "POST", path: "/api/v1/tasks/val/examples", who: "alice", body: ex("val.c3", "Statement C.", "neutral"),
				status: 201, want: map[string]any{"example.model_wrong": true}, save: map[string]string{"C": "example.id"}},
			{name: "D", method: "POST", path: "/api/v1/tasks/val/examples", who: "alice", body: ex("val.c4", "Statement D.", "positive"),
				status: 201, want: map[string]any{"example.model_wrong": false}, save: map[string]string{"D": "example.id"}},
			{name: "own examples are never served", method: "GET", path: next, who: "alice", status: 204},
			{name: "served blind", method: "GET", path: next, who: "bob", status: 200,
				want: map[string]any{"example.id": equalVar("A"), "example.input.statement": "Statement A.", "example.input.label": "negative",
					"example.model_output": absent, "example.model": absent, "example.model_wrong": nil, "example.model_error": absent,
					"example.user": absent, "example.user_id": absent, "example.metadata": length(0), "context.context.context": present},
				check: func(t *testing.T, e *env, r *servertest.Response) {
					for _, leak := range []string{"alice", `"positive":1`, "sent-fake", "val-fake"} {
						if strings.Contains(string(r.Body), leak) {
							t.Errorf("the validator sees %q: %s", leak, r.Body)
						}
					}
				}},
			{name: "own example", method: "POST", path: "/api/v1/examples/{A}/validations", who: "alice", body: vote("correct"), status: 403,
				want: map[string]any{"error.code": "forbidden"}},
			{name: "bad label", method: "POST", path: "/api/v1/examples/{A}/validations", who: "bob", body: vote("maybe"), status: 422,
				want: map[string]any{"error.code": "invalid", "error.field": "label"}},
			{name: "no label", method: "POST", path: "/api/v1/examples/{A}/validations", who: "bob", body: map[string]any{}, status: 422,
				want: map[string]any{"error.field": "label"}},
			{name: "owner mode by a non-owner", method: "POST", path: "/api/v1/examples/{A}/validations", who: "bob",
				body: map[string]any{"label": "correct", "mode": "owner"}, status: 403, want: map[string]any{"error.code": "forbidden"}},
			{name: "metadata for another label", method: "POST", path: "/api/v1/examples/{A}/validations", who: "bob",
				body: map[string]any{"label": "correct", "metadata": map[string]any{"corrected_label": "neutral"}}, status: 422,
				want: map[string]any{"error.field": "metadata.corrected_label"}},
			{name: "anonymous vote", method: "POST", path: "/api/v1/examples/{A}/validations", body: vote("correct"), status: 401},
			{name: "missing example", method: "POST", path: "/api/v1/examples/99999999/validations", who: "bob", body: vote("correct"), status: 404},
			{name: "bob: A correct", method: "POST", path: "/api/v1/examples/{A}/validations", who: "bob", body: vote("correct"), status: 201,
				want: map[string]any{"example.id": equalVar("A"), "example.status": "pending_validation", "example.validations.correct": 1}},
			{name: "bob twice", method: "POST", path: "/api/v1/examples/{A}/validations", who: "bob", body: vote("incorrect"), status: 409,
				want: map[string]any{"error.code": "conflict"}},
			{name: "bob is served B next", method: "GET", path: next, who: "bob", status: 200, want: map[string]any{"example.id": equalVar("B")}},
			{name: "carol: A correct", method: "POST", path: "/api/v1/examples/{A}/validations", who: "carol", body: vote("correct"), status: 201,
				want: map[string]any{"example.status": "pending_validation", "example.validations.correct": 2}},
			{name: "dave: A correct verifies", method: "POST", path: "/api/v1/examples/{A}/validations", who: "dave", body: vote("correct"), status: 201,
				want: map[string]any{"example.status": "verified", "example.validations.correct": 3}},
			{name: "erin: A already verified", method: "POST", path: "/api/v1/examples/{A}/validations", who: "erin", body: vote("correct"), status: 409},
		})
		e.WantStats(t, "val", 1, 4, 3, 1, 0)
		e.run(t, []scenario{
			{name: "bob: B incorrect", method: "POST", path: "/api/v1/examples/{B}/validations", who: "bob",
				body: map[string]any{"label": "incorrect", "metadata": map[string]any{"corrected_label": "positive"}}, status: 201},
			{name: "carol: B incorrect", method: "POST", path: "/api/v1/examples/{B}/validations", who: "carol", body: vote("incorrect"), status: 201,
				want: map[string]any{"example.validations.incorrect": 2, "example.status": "pending_validation"}},
			{name: "dave: B incorrect rejects", method: "POST", path: "/api/v1/examples/{B}/validations", who: "dave", body: vote("incorrect"), status: 201,
				want: map[string]any{"example.status": "rejected", "example.validations.incorrect": 3}},
			{name: "the rejected context is offered again", method: "GET", path: "/api/v1/tasks/val/context?strategy=validation_failed", who: "erin",
				status: 200, want: map[string]any{"id": equalVar("val.c2")}},
		})
		e.WantStats(t, "val", 1, 4, 3, 1, 1)
		e.run(t, []scenario{
			{name: "bob: C correct", method: "POST", path: "/api/v1/examples/{C}/validations", who: "bob", body: vote("correct"), status: 201},
			{name: "carol: C incorrect", method: "POST", path: "/api/v1/examples/{C}/validations", who: "carol", body: vote("incorrect"), status: 201},
			{name: "dave: C flagged", method: "POST", path: "/api/v1/examples/{C}/validations", who: "dave", body: vote("flagged"), status: 201,
				want: map[string]any{"example.status": "pending_validation", "example.validations.correct": 1,
					"example.validations.incorrect": 1, "example.validations.flagged": 1}},
			{name: "mixed votes stay in the queue", method: "GET", path: next, who: "erin", status: 200, want: map[string]any{"example.id": equalVar("C")}},
			{name: "erin: C correct", method: "POST", path: "/api/v1/examples/{C}/validations", who: "erin", body: vote("correct"), status: 201,
				want: map[string]any{"example.status": "pending_validation", "example.validations.correct": 2}},
			{name: "bob has nothing left", method: "GET", path: next, who: "bob", status: 204},
			{name: "the admin is served C", method: "GET", path: next, who: "admin", status: 200, want: map[string]any{"example.id": equalVar("C")}},
			{name: "admin: C correct as a user verifies", method: "POST", path: "/api/v1/examples/{C}/validations", who: "admin", body: vote("correct"),
				status: 201, want: map[string]any{"example.status": "verified", "example.validations.correct": 3}},
			{name: "non-fooling examples are not served", method: "GET", path: next, who: "erin", status: 204},
		})
		e.WantStats(t, "val", 1, 4, 3, 2, 1)
		e.run(t, []scenario{
			{name: "owner rejects a verified example", method: "POST", path: "/api/v1/examples/{A}/validations", who: "admin",
				body: map[string]any{"label": "incorrect", "mode": "owner"}, status: 201, want: map[string]any{"example.status": "rejected"}},
			{name: "owner mode once", method: "POST", path: "/api/v1/examples/{A}/validations", who: "admin",
				body: map[string]any{"label": "correct", "mode": "owner"}, status: 409},
		})
		e.WantStats(t, "val", 1, 4, 3, 1, 2)
		e.ownedBy(t, "val", "erin")
		e.run(t, []scenario{
			{name: "E", method: "POST", path: "/api/v1/tasks/val/examples", who: "carol", body: ex("val.c1", "Statement E.", "negative"),
				status: 201, save: map[string]string{"E": "example.id"}},
			{name: "F", method: "POST", path: "/api/v1/tasks/val/examples", who: "carol", body: ex("val.c1", "Statement F.", "neutral"),
				status: 201, save: map[string]string{"F": "example.id"}},
			{name: "another owner overrides the first vote", method: "POST", path: "/api/v1/examples/{B}/validations", who: "erin",
				body: map[string]any{"label": "correct", "mode": "owner"}, status: 201, want: map[string]any{"example.status": "verified"}},
			{name: "owner verifies E at once", method: "POST", path: "/api/v1/examples/{E}/validations", who: "erin",
				body: map[string]any{"label": "correct", "mode": "owner"}, status: 201,
				want: map[string]any{"example.status": "verified", "example.validations.correct": 0}},
			{name: "bob: F flagged", method: "POST", path: "/api/v1/examples/{F}/validations", who: "bob", body: vote("flagged"), status: 201},
			{name: "alice: F flagged", method: "POST", path: "/api/v1/examples/{F}/validations", who: "alice", body: vote("flagged"), status: 201},
			{name: "dave: F flagged rejects", method: "POST", path: "/api/v1/examples/{F}/validations", who: "dave", body: vote("flagged"), status: 201,
				want: map[string]any{"example.status": "rejected", "example.validations.flagged": 3}},
			{name: "owner flags", method: "POST", path: "/api/v1/examples/{D}/validations", who: "erin",
				body: map[string]any{"label": "flagged", "mode": "owner"}, status: 201, want: map[string]any{"example.status": "rejected"}},
			{name: "bad mode", method: "POST", path: "/api/v1/examples/{D}/validations", who: "erin",
				body: map[string]any{"label": "correct", "mode": "boss"}, status: 422, want: map[string]any{"error.field": "mode"}},
		})
		// A rejected (owner), B verified (owner), C verified, D rejected (not fooling), E verified, F rejected.
		e.WantStats(t, "val", 1, 6, 5, 3, 3)
		e.run(t, []scenario{
			{name: "leaderboard", method: "GET", path: "/api/v1/tasks/val/annotators", status: 200,
				want: map[string]any{"round": 0, "annotators": length(2),
					"annotators[0].rank": 1, "annotators[0].user.username": "alice", "annotators[0].examples": 4, "annotators[0].fooled": 3,
					"annotators[0].verified_fooled": 2, "annotators[0].rejected_fooled": 1, "annotators[0].mer": 0.75, "annotators[0].vmer": 0.5,
					"annotators[1].rank": 2, "annotators[1].user.username": "carol", "annotators[1].examples": 2,
					"annotators[1].verified_fooled": 1, "annotators[1].rejected_fooled": 1}},
			{name: "leaderboard of round 1", method: "GET", path: "/api/v1/tasks/val/annotators?round=1", status: 200,
				want: map[string]any{"round": 1, "annotators": length(2), "annotators[0].user.username": "alice", "annotators[0].examples": 4}},
			{name: "leaderboard of a missing round", method: "GET", path: "/api/v1/tasks/val/annotators?round=3", status: 404},
			{name: "leaderboard limit", method: "GET", path: "/api/v1/tasks/val/annotators?limit=1", status: 200,
				want: map[string]any{"annotators": length(1), "annotators[0].user.username": "alice"}},
			{name: "leaderboard of a missing task", method: "GET", path: "/api/v1/tasks/nope/annotators", status: 404},
			{name: "validators' counts", method: "GET", path: "/api/v1/me", who: "dave", status: 200,
				want: map[string]any{"stats.val.validations": 4, "totals.validations": 4, "stats.val.examples": 0}},
			{name: "bob's count", method: "GET", path: "/api/v1/me", who: "bob", status: 200,
				want: map[string]any{"totals.validations": 4}},
			{name: "next round", method: "POST", path: "/api/v1/tasks/val/rounds", who: "admin", body: map[string]any{"models": []string{}}, status: 201},
			{name: "leaderboard of the new round", method: "GET", path: "/api/v1/tasks/val/annotators?round=2", status: 200,
				want: map[string]any{"round": 2, "annotators": length(0)}},
			{name: "nothing to validate in the new round", method: "GET", path: next, who: "bob", status: 204},
			{name: "round 1 on request: all resolved", method: "GET", path: next + "?round=1", who: "bob", status: 204},
		})
		e.WantStats(t, "val", 2, 0, 0, 0, 0)
	})
}

// TestValidateNonFooling: with settings.validate_non_fooling, examples that did not fool the model
// are served too, after the fooling ones.
func TestValidateNonFooling(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		e.newTask(t, "all", sentimentConfig, map[string]any{"validate_non_fooling": true, "num_matching_validations": 1},
			servertest.Says("positive", sentimentLabels...), 1)
		next := "/api/v1/tasks/all/validations/next"
		e.run(t, []scenario{
			{name: "not fooling", method: "POST", path: "/api/v1/tasks/all/examples", who: "alice", body: ex("all.c1", "Nice.", "positive"),
				status: 201, save: map[string]string{"X": "example.id"}},
			{name: "fooling", method: "POST", path: "/api/v1/tasks/all/examples", who: "alice", body: ex("all.c1", "Nice?", "negative"),
				status: 201, save: map[string]string{"Y": "example.id"}},
			{name: "fooling first", method: "GET", path: next, who: "bob", status: 200, want: map[string]any{"example.id": equalVar("Y")}},
			{name: "N=1 verifies", method: "POST", path: "/api/v1/examples/{Y}/validations", who: "bob", body: vote("correct"), status: 201,
				want: map[string]any{"example.status": "verified"}},
			{name: "then the others", method: "GET", path: next, who: "bob", status: 200, want: map[string]any{"example.id": equalVar("X")}},
			{name: "N=1 rejects", method: "POST", path: "/api/v1/examples/{X}/validations", who: "carol", body: vote("incorrect"), status: 201,
				want: map[string]any{"example.status": "rejected"}},
			{name: "empty queue", method: "GET", path: next, who: "dave", status: 204},
		})
		e.WantStats(t, "all", 1, 2, 1, 1, 1)
	})
}
