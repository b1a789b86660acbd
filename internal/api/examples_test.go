package api_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
)

// ex is an example body for the sentiment-like test tasks.
func ex(ctxVar, statement, label string) func(*env) any {
	return func(e *env) any {
		return map[string]any{"context_id": e.vars[ctxVar], "input": map[string]any{"statement": statement, "label": label}}
	}
}

func TestExamples(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		e.newTask(t, "sent", sentimentConfig, nil, servertest.Says("positive", sentimentLabels...), 3)
		e.ownedBy(t, "sent", "bob")
		e.newTask(t, "other", sentimentConfig, nil, servertest.Says("positive", sentimentLabels...), 1)
		raw := func(s string) servertest.Raw { return servertest.Raw{ContentType: "application/json", Body: []byte(s)} }
		e.run(t, []scenario{
			{name: "fooling example", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: ex("sent.c1", "What a delight, said nobody.", "negative"), status: 201,
				want: map[string]any{"example.id": present, "example.task": "sent", "example.round": 1, "example.context_id": equalVar("sent.c1"),
					"example.input.statement": "What a delight, said nobody.", "example.input.label": "negative",
					"example.model.name": "sent-fake", "example.model.id": present, "example.model_output.label": "positive",
					"example.model_output.prob.positive": 1.0, "example.model_wrong": true, "example.model_error": absent,
					"example.status": "pending_validation", "example.validations.correct": 0, "example.flagged": false,
					"example.metadata": length(0), "example.tag": "c1", "example.created_at": present, "example.sandbox": absent},
				save: map[string]string{"ex1": "example.id"}},
			{name: "non-fooling example", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: ex("sent.c2", "Lovely.", "positive"), status: 201,
				want: map[string]any{"example.model_wrong": false, "example.id": notEqualVar("ex1")}, save: map[string]string{"ex2": "example.id"}},
			{name: "own tag", method: "POST", path: "/api/v1/tasks/sent/examples", who: "carol",
				body: func(e *env) any {
					return map[string]any{"context_id": e.vars["sent.c3"], "tag": "sarcasm", "metadata": map[string]any{"example_explanation": "irony"},
						"input": map[string]any{"statement": "Great, another Monday.", "label": "neutral"}}
				}, status: 201,
				want: map[string]any{"example.tag": "sarcasm", "example.model_wrong": true, "example.metadata.example_explanation": "irony"},
				save: map[string]string{"ex3": "example.id"}},
			{name: "sandbox", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: func(e *env) any {
					return map[string]any{"context_id": e.vars["sent.c1"], "sandbox": true,
						"input": map[string]any{"statement": "Try me.", "label": "negative"}}
				}, status: 200,
				want: map[string]any{"example.sandbox": true, "example.id": "", "example.model_wrong": true, "example.model_output.label": "positive"}},
		})
		// The sandbox stored nothing: two of alice's, one of carol's.
		e.WantStats(t, "sent", 1, 3, 2, 0, 0)
		other := e.vars["other.c1"]
		e.run(t, []scenario{
			{name: "label outside the set", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: ex("sent.c1", "Meh.", "angry"), status: 422, want: map[string]any{"error.code": "invalid", "error.field": "input.label"}},
			{name: "missing input field", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: func(e *env) any {
					return map[string]any{"context_id": e.vars["sent.c1"], "input": map[string]any{"label": "positive"}}
				}, status: 422, want: map[string]any{"error.field": "input.statement"}},
			{name: "every input problem listed", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: func(e *env) any {
					return map[string]any{"context_id": e.vars["sent.c1"], "input": map[string]any{"colour": "red"}}
				},
				status: 422, want: map[string]any{"error.details": length(3)}},
			{name: "empty string", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: ex("sent.c1", "", "positive"), status: 422, want: map[string]any{"error.field": "input.statement"}},
			{name: "blank string", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: ex("sent.c1", " \t\n", "positive"), status: 422, want: map[string]any{"error.field": "input.statement"}},
			{name: "unknown input field", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: func(e *env) any {
					return map[string]any{"context_id": e.vars["sent.c1"], "input": map[string]any{"statement": "x", "label": "positive", "colour": "red"}}
				}, status: 422, want: map[string]any{"error.field": "input.colour"}},
			{name: "wrong input type", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: func(e *env) any {
					return map[string]any{"context_id": e.vars["sent.c1"], "input": map[string]any{"statement": 42, "label": "positive"}}
				}, status: 422, want: map[string]any{"error.field": "input.statement"}},
			{name: "input not an object", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body:   func(e *env) any { return map[string]any{"context_id": e.vars["sent.c1"], "input": "hello"} },
				status: 422, want: map[string]any{"error.field": "input"}},
			{name: "context id as a number", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body:   map[string]any{"context_id": 1, "input": map[string]any{"statement": "x", "label": "positive"}},
				status: 422, want: map[string]any{"error.field": "context_id"}},
			{name: "missing context id", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body:   map[string]any{"input": map[string]any{"statement": "x", "label": "positive"}},
				status: 422, want: map[string]any{"error.field": "context_id"}},
			{name: "unknown context", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body:   map[string]any{"context_id": "99999999", "input": map[string]any{"statement": "x", "label": "positive"}},
				status: 422, want: map[string]any{"error.code": "invalid", "error.field": "context_id"}},
			{name: "malformed context id", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body:   map[string]any{"context_id": "abc", "input": map[string]any{"statement": "x", "label": "positive"}},
				status: 422, want: map[string]any{"error.field": "context_id"}},
			{name: "context of another task", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body:   map[string]any{"context_id": other, "input": map[string]any{"statement": "x", "label": "positive"}},
				status: 422, want: map[string]any{"error.field": "context_id"}},
			{name: "malformed JSON", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: raw(`{"context_id": "1", "input": {`), status: 400, want: map[string]any{"error.code": "malformed"}},
			{name: "JSON list", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: raw(`[1, 2]`), status: 422},
			{name: "1 MB input", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: ex("sent.c1", strings.Repeat("big ", 1<<18), "positive"), status: 413,
				want: map[string]any{"error.code": "too_large", "error.message": absentText("big big")}},
			{name: "input over the field limit", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: ex("sent.c1", strings.Repeat("x", 10001), "positive"), status: 422,
				want: map[string]any{"error.field": "input.statement", "error.message": absentText("xxxxxxxxxx")}},
			{name: "invalid UTF-8", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: func(e *env) any {
					return raw(`{"context_id": "` + e.vars["sent.c1"] + `", "input": {"statement": "bad ` + "\xff\xfe" + ` bytes", "label": "positive"}}`)
				}, status: 400, want: map[string]any{"error.code": "malformed"}},
			{name: "invalid UTF-8 in a key", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: func(e *env) any {
					return raw(`{"context_id": "` + e.vars["sent.c1"] + `", "input": {"statement": "ok", "label": "positive", "` + "\xc3" + `": 1}}`)
				}, status: 400},
			{name: "NUL character", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: ex("sent.c1", "nul \x00 here", "positive"), status: 422, want: map[string]any{"error.code": "invalid", "error.field": "input.statement"}},
			{name: "NUL character in a key", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: func(e *env) any {
					return map[string]any{"context_id": e.vars["sent.c1"], "input": map[string]any{"statement": "x", "label": "positive", "a\x00": "b"}}
				}, status: 422, want: map[string]any{"error.field": "input"}},
			{name: "NUL character in the tag", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: func(e *env) any {
					return map[string]any{"context_id": e.vars["sent.c1"], "tag": "\x00", "input": map[string]any{"statement": "x", "label": "positive"}}
				}, status: 422, want: map[string]any{"error.field": "tag"}},
			{name: "unknown metadata", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: func(e *env) any {
					return map[string]any{"context_id": e.vars["sent.c1"], "metadata": map[string]any{"mood": "x"},
						"input": map[string]any{"statement": "x", "label": "positive"}}
				}, status: 422, want: map[string]any{"error.field": "metadata.mood"}},
			{name: "tag too long", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: func(e *env) any {
					return map[string]any{"context_id": e.vars["sent.c1"], "tag": strings.Repeat("t", 101),
						"input": map[string]any{"statement": "x", "label": "positive"}}
				}, status: 422, want: map[string]any{"error.field": "tag"}},
			{name: "unknown task", method: "POST", path: "/api/v1/tasks/nope/examples", who: "alice",
				body: ex("sent.c1", "x", "positive"), status: 404},
			{name: "anonymous", method: "POST", path: "/api/v1/tasks/sent/examples", body: ex("sent.c1", "x", "positive"), status: 401},
			{name: "bad token", method: "POST", path: "/api/v1/tasks/sent/examples", who: "bad", body: ex("sent.c1", "x", "positive"), status: 401},
		})
		// None of the refused examples was stored.
		e.WantStats(t, "sent", 1, 3, 2, 0, 0)
		e.run(t, []scenario{
			{name: "get as creator", method: "GET", path: "/api/v1/examples/{ex1}", who: "alice", status: 200,
				want: map[string]any{"example.id": equalVar("ex1"), "example.input.label": "negative", "example.model_wrong": true,
					"example.task": "sent", "example.model_output.label": "positive"}},
			{name: "get as task owner", method: "GET", path: "/api/v1/examples/{ex1}", who: "bob", status: 200,
				want: map[string]any{"example.id": equalVar("ex1")}},
			{name: "get as admin", method: "GET", path: "/api/v1/examples/{ex1}", who: "admin", status: 200},
			{name: "get as another user", method: "GET", path: "/api/v1/examples/{ex1}", who: "carol", status: 404,
				want: map[string]any{"error.code": "not_found"}},
			{name: "get anonymous", method: "GET", path: "/api/v1/examples/{ex1}", status: 401},
			{name: "get missing", method: "GET", path: "/api/v1/examples/99999999", who: "admin", status: 404},
			{name: "get malformed id", method: "GET", path: "/api/v1/examples/abc", who: "admin", status: 404},
			{name: "example of another task", method: "POST", path: "/api/v1/tasks/other/examples", who: "alice",
				body: ex("other.c1", "Elsewhere.", "negative"), status: 201, save: map[string]string{"exo": "example.id"}},
			{name: "an owner of one task cannot read another's examples", method: "GET", path: "/api/v1/examples/{exo}", who: "bob", status: 404},
			{name: "retract it", method: "POST", path: "/api/v1/examples/{exo}/retract", who: "alice", status: 200},

			{name: "explain", method: "PATCH", path: "/api/v1/examples/{ex1}", who: "alice",
				body: map[string]any{"metadata": map[string]any{"example_explanation": "sarcasm"}}, status: 200,
				want: map[string]any{"example.metadata.example_explanation": "sarcasm"}},
			{name: "explanations are merged", method: "PATCH", path: "/api/v1/examples/{ex1}", who: "alice",
				body: map[string]any{"metadata": map[string]any{"model_explanation_wrong": "it missed the irony"}}, status: 200,
				want: map[string]any{"example.metadata.example_explanation": "sarcasm", "example.metadata.model_explanation_wrong": "it missed the irony"}},
			{name: "merged explanations are stored", method: "GET", path: "/api/v1/examples/{ex1}", who: "alice", status: 200,
				want: map[string]any{"example.metadata": length(2)}},
			{name: "explanation the form never asked", method: "PATCH", path: "/api/v1/examples/{ex2}", who: "alice",
				body: map[string]any{"metadata": map[string]any{"model_explanation_wrong": "it was not fooled"}}, status: 422,
				want: map[string]any{"error.field": "metadata.model_explanation_wrong"}},
			{name: "unknown explanation", method: "PATCH", path: "/api/v1/examples/{ex1}", who: "alice",
				body: map[string]any{"metadata": map[string]any{"mood": "x"}}, status: 422, want: map[string]any{"error.field": "metadata.mood"}},
			{name: "model_wrong on an exact_match task", method: "PATCH", path: "/api/v1/examples/{ex2}", who: "alice",
				body: map[string]any{"model_wrong": true}, status: 422, want: map[string]any{"error.code": "invalid", "error.field": "model_wrong"}},
			{name: "patch by another user", method: "PATCH", path: "/api/v1/examples/{ex1}", who: "carol",
				body: map[string]any{"metadata": map[string]any{"example_explanation": "mine now"}}, status: 404},
			{name: "patch by the owner is not the creator's", method: "PATCH", path: "/api/v1/examples/{ex1}", who: "bob",
				body: map[string]any{"metadata": map[string]any{"example_explanation": "owner edit"}}, status: 404},
			{name: "patch anonymous", method: "PATCH", path: "/api/v1/examples/{ex1}", body: map[string]any{}, status: 401},
			{name: "nothing changed by the refused patches", method: "GET", path: "/api/v1/examples/{ex1}", who: "alice", status: 200,
				want: map[string]any{"example.metadata.example_explanation": "sarcasm", "example.model_wrong": true}},

			{name: "flag", method: "POST", path: "/api/v1/examples/{ex2}/flag", who: "alice", body: map[string]any{"reason": "typo"}, status: 200,
				want: map[string]any{"example.flagged": true, "example.flag_reason": "typo"}},
			{name: "flag without a body", method: "POST", path: "/api/v1/examples/{ex1}/flag", who: "alice", status: 200,
				want: map[string]any{"example.flagged": true}},
			{name: "flag by another user", method: "POST", path: "/api/v1/examples/{ex1}/flag", who: "carol", status: 404},
			{name: "flag reason with NUL", method: "POST", path: "/api/v1/examples/{ex1}/flag", who: "alice",
				body: map[string]any{"reason": "a\x00b"}, status: 422, want: map[string]any{"error.field": "reason"}},
			{name: "explanation with NUL", method: "PATCH", path: "/api/v1/examples/{ex1}", who: "alice",
				body: map[string]any{"metadata": map[string]any{"example_explanation": "a\x00b"}}, status: 422,
				want: map[string]any{"error.field": "metadata.example_explanation"}},
			{name: "flag reason too long", method: "POST", path: "/api/v1/examples/{ex1}/flag", who: "alice",
				body: map[string]any{"reason": strings.Repeat("r", 2001)}, status: 422, want: map[string]any{"error.field": "reason"}},

			{name: "retract by another user", method: "POST", path: "/api/v1/examples/{ex2}/retract", who: "carol", status: 404},
			{name: "retract by the owner", method: "POST", path: "/api/v1/examples/{ex2}/retract", who: "bob", status: 404},
			{name: "retract", method: "POST", path: "/api/v1/examples/{ex2}/retract", who: "alice", status: 200,
				want: map[string]any{"example.status": "retracted", "example.id": equalVar("ex2")}},
			{name: "retract twice", method: "POST", path: "/api/v1/examples/{ex2}/retract", who: "alice", status: 409,
				want: map[string]any{"error.code": "conflict"}},
			{name: "patch a retracted example", method: "PATCH", path: "/api/v1/examples/{ex2}", who: "alice",
				body: map[string]any{"metadata": map[string]any{"example_explanation": "late"}}, status: 409},
			{name: "validate a retracted example", method: "POST", path: "/api/v1/examples/{ex2}/validations", who: "bob",
				body: map[string]any{"label": "correct"}, status: 409},
			{name: "retract the fooling one", method: "POST", path: "/api/v1/examples/{ex1}/retract", who: "alice", status: 200},
		})
		// Retracted examples stop counting: carol's is what is left.
		e.WantStats(t, "sent", 1, 1, 1, 0, 0)
		e.run(t, []scenario{
			{name: "alice's counters", method: "GET", path: "/api/v1/me", who: "alice", status: 200,
				want: map[string]any{"stats.sent.examples": 0, "stats.sent.retracted": 2, "stats.sent.fooled": 0, "stats.other.retracted": 1, "totals.retracted": 3}},
			{name: "carol's counters", method: "GET", path: "/api/v1/me", who: "carol", status: 200,
				want: map[string]any{"stats.sent.examples": 1, "stats.sent.fooled": 1, "stats.sent.mer": 1.0}},
		})
	})
}

// TestExamplesOfOtherRounds: once round 2 opens, round 1's contexts take no more examples.
func TestExamplesOfOtherRounds(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		model := e.newTask(t, "sent", sentimentConfig, nil, servertest.Says("positive", sentimentLabels...), 1)
		e.mustCall(t, http.StatusCreated, http.MethodPost, "/api/v1/tasks/sent/rounds", "admin", map[string]any{"models": []string{itoa(model)}})
		e.uploadContexts(t, "sent", 2, "r2-", 1)
		e.run(t, []scenario{
			{name: "context of a closed round", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: ex("sent.c1", "x", "negative"), status: 422, want: map[string]any{"error.field": "context_id"}},
			{name: "context of the current round", method: "POST", path: "/api/v1/tasks/sent/examples", who: "alice",
				body: ex("sent.r2-1", "x", "negative"), status: 201, want: map[string]any{"example.round": 2, "example.model_wrong": true}},
		})
		e.WantStats(t, "sent", 1, 0, 0, 0, 0)
		e.WantStats(t, "sent", 2, 1, 1, 0, 0)
	})
}

// TestDailyCap: settings.max_examples_per_day caps each user's examples in the task per UTC day.
func TestDailyCap(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		e.newTask(t, "capped", sentimentConfig, map[string]any{"max_examples_per_day": 2}, servertest.Says("positive", sentimentLabels...), 1)
		e.run(t, []scenario{
			{name: "first", method: "POST", path: "/api/v1/tasks/capped/examples", who: "alice", body: ex("capped.c1", "a", "negative"), status: 201},
			{name: "second", method: "POST", path: "/api/v1/tasks/capped/examples", who: "alice", body: ex("capped.c1", "b", "positive"), status: 201},
			{name: "third is refused", method: "POST", path: "/api/v1/tasks/capped/examples", who: "alice", body: ex("capped.c1", "c", "negative"),
				status: 429, want: map[string]any{"error.code": "rate_limited"}},
			{name: "still refused", method: "POST", path: "/api/v1/tasks/capped/examples", who: "alice", body: ex("capped.c1", "d", "negative"),
				status: 429},
			{name: "a bad example is 422, not 429", method: "POST", path: "/api/v1/tasks/capped/examples", who: "alice", body: ex("capped.c1", "d", "angry"),
				status: 422},
			{name: "sandbox is not capped", method: "POST", path: "/api/v1/tasks/capped/examples", who: "alice",
				body: func(e *env) any {
					return map[string]any{"context_id": e.vars["capped.c1"], "sandbox": true, "input": map[string]any{"statement": "e", "label": "negative"}}
				}, status: 200},
			{name: "other users have their own cap", method: "POST", path: "/api/v1/tasks/capped/examples", who: "bob", body: ex("capped.c1", "f", "negative"),
				status: 201},
		})
		e.WantStats(t, "capped", 1, 3, 2, 0, 0)
	})
}

// TestAskUser: on an ask_user task the annotator says whether the model was wrong, and a "yes"
// counts as fooling everywhere (Dynabench never counts it).
func TestAskUser(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		e.newTask(t, "ask", askUserConfig, nil, servertest.Says("positive"), 2)
		e.run(t, []scenario{
			{name: "example waits for the annotator", method: "POST", path: "/api/v1/tasks/ask/examples", who: "alice",
				body: ex("ask.c1", "It is fine.", "negative"), status: 201,
				want: map[string]any{"example.model_wrong": nil, "example.model_output.label": "positive", "example.model_error": absent},
				save: map[string]string{"a1": "example.id"}},
			{name: "second", method: "POST", path: "/api/v1/tasks/ask/examples", who: "alice",
				body: ex("ask.c2", "It is great.", "positive"), status: 201, save: map[string]string{"a2": "example.id"}},
			{name: "pending answers are not validated", method: "GET", path: "/api/v1/tasks/ask/validations/next", who: "bob", status: 204},
			{name: "explanation before the answer is accepted", method: "PATCH", path: "/api/v1/examples/{a2}", who: "alice",
				body: map[string]any{"metadata": map[string]any{"model_explanation_wrong": "?"}}, status: 200},
		})
		e.WantStats(t, "ask", 1, 2, 0, 0, 0)
		e.run(t, []scenario{
			{name: "annotator says fooled", method: "PATCH", path: "/api/v1/examples/{a1}", who: "alice",
				body: map[string]any{"model_wrong": true, "metadata": map[string]any{"model_explanation_wrong": "negation"}}, status: 200,
				want: map[string]any{"example.model_wrong": true, "example.metadata.model_explanation_wrong": "negation"}},
			{name: "answer only once", method: "PATCH", path: "/api/v1/examples/{a1}", who: "alice",
				body: map[string]any{"model_wrong": false}, status: 409, want: map[string]any{"error.field": "model_wrong"}},
			{name: "not someone else's to answer", method: "PATCH", path: "/api/v1/examples/{a2}", who: "bob",
				body: map[string]any{"model_wrong": true}, status: 404},
			{name: "annotator says not fooled", method: "PATCH", path: "/api/v1/examples/{a2}", who: "alice",
				body: map[string]any{"model_wrong": false}, status: 200, want: map[string]any{"example.model_wrong": false}},
		})
		e.WantStats(t, "ask", 1, 2, 1, 0, 0)
		e.run(t, []scenario{
			{name: "the fooling one is served", method: "GET", path: "/api/v1/tasks/ask/validations/next", who: "bob", status: 200,
				want: map[string]any{"example.id": equalVar("a1"), "example.model_wrong": nil}},
			{name: "bob", method: "POST", path: "/api/v1/examples/{a1}/validations", who: "bob", body: map[string]any{"label": "correct"}, status: 201},
			{name: "carol", method: "POST", path: "/api/v1/examples/{a1}/validations", who: "carol", body: map[string]any{"label": "correct"}, status: 201},
			{name: "dave verifies", method: "POST", path: "/api/v1/examples/{a1}/validations", who: "dave", body: map[string]any{"label": "correct"},
				status: 201, want: map[string]any{"example.status": "verified"}},
			{name: "the leaderboard counts it", method: "GET", path: "/api/v1/tasks/ask/annotators", status: 200,
				want: map[string]any{"annotators": length(1), "annotators[0].user.username": "alice", "annotators[0].examples": 2,
					"annotators[0].fooled": 1, "annotators[0].verified_fooled": 1, "annotators[0].vmer": 0.5}},
		})
		e.WantStats(t, "ask", 1, 2, 1, 1, 0)
		down := e.AddModel(t, "ask", "down", servertest.Fails(errors.New("down")))
		e.run(t, []scenario{
			{name: "model down", method: "PUT", path: "/api/v1/tasks/ask/rounds/1/models", who: "admin",
				body: map[string]any{"models": []string{itoa(down)}}, status: 200},
			{name: "example without an answer", method: "POST", path: "/api/v1/tasks/ask/examples", who: "alice",
				body: ex("ask.c1", "Nobody answers.", "negative"), status: 201,
				want: map[string]any{"example.model_wrong": nil, "example.model_error": contains{"unreachable"}}, save: map[string]string{"a3": "example.id"}},
			{name: "nothing to judge", method: "PATCH", path: "/api/v1/examples/{a3}", who: "alice", body: map[string]any{"model_wrong": true},
				status: 409, want: map[string]any{"error.field": "model_wrong"}},
			{name: "retracting the fooling one", method: "POST", path: "/api/v1/examples/{a1}/retract", who: "alice", status: 200},
		})
		e.WantStats(t, "ask", 1, 2, 0, 0, 0)
	})
}

// TestModelFailures: a model that times out, fails or answers garbage never loses the example: it
// is stored (201) with model_error and model_wrong null, and counts as collected, not fooled.
func TestModelFailures(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine, servertest.NoDemo)
		blocking := servertest.Blocks()
		e.newTask(t, "flaky", sentimentConfig, map[string]any{"model_timeout_ms": 150}, blocking, 1)
		down := e.AddModel(t, "flaky", "down", servertest.Fails(errors.New("connection refused")))
		garbage := e.AddModel(t, "flaky", "garbage", servertest.Says("ecstatic"))
		noLabel := e.AddModel(t, "flaky", "no-label", &servertest.Fake{Output: map[string]any{"prob": map[string]any{"positive": 1}}})
		setModel := func(id int64) scenario {
			return scenario{name: "switch model", method: "PUT", path: "/api/v1/tasks/flaky/rounds/1/models", who: "admin",
				body: map[string]any{"models": []string{itoa(id)}}, status: 200}
		}
		statement := "The model will not answer this properly."
		e.run(t, []scenario{
			{name: "timeout", method: "POST", path: "/api/v1/tasks/flaky/examples", who: "alice", body: ex("flaky.c1", statement, "negative"),
				status: 201, want: map[string]any{"example.id": present, "example.model_wrong": nil, "example.model_error": contains{"timeout: "},
					"example.input.statement": statement, "example.status": "pending_validation"},
				save: map[string]string{"timeout": "example.id"},
				check: func(t *testing.T, e *env, r *servertest.Response) {
					if !strings.HasPrefix(r.String("example.model_error"), "timeout: ") {
						t.Errorf("model_error %q, want it to start with timeout: ", r.String("example.model_error"))
					}
				}},
			{name: "the timed-out example is stored", method: "GET", path: "/api/v1/examples/{timeout}", who: "alice", status: 200,
				want: map[string]any{"example.input.statement": statement, "example.model_wrong": nil, "example.model_error": contains{"timeout"}}},
			setModel(down),
			{name: "down", method: "POST", path: "/api/v1/tasks/flaky/examples", who: "alice", body: ex("flaky.c1", statement, "negative"),
				status: 201, want: map[string]any{"example.model_wrong": nil, "example.model_error": contains{"unreachable: "},
					"example.model.name": "down"}},
			setModel(garbage),
			{name: "label outside the set", method: "POST", path: "/api/v1/tasks/flaky/examples", who: "alice", body: ex("flaky.c1", statement, "negative"),
				status: 201, want: map[string]any{"example.model_wrong": nil, "example.model_error": contains{"invalid_answer: "}}},
			setModel(noLabel),
			{name: "no label", method: "POST", path: "/api/v1/tasks/flaky/examples", who: "alice", body: ex("flaky.c1", statement, "negative"),
				status: 201, want: map[string]any{"example.model_wrong": nil, "example.model_error": contains{"invalid_answer: "}}},
			{name: "failed examples are not served to validators", method: "GET", path: "/api/v1/tasks/flaky/validations/next", who: "bob", status: 204},
		})
		if blocking.Calls() != 1 {
			t.Errorf("the blocking model was asked %d times, want 1", blocking.Calls())
		}
		e.WantStats(t, "flaky", 1, 4, 0, 0, 0)

		// The model is back: failed examples are scored again, once.
		good := e.AddModel(t, "flaky", "good", servertest.Says("positive", sentimentLabels...))
		e.run(t, []scenario{
			setModel(good),
			{name: "answered example", method: "POST", path: "/api/v1/tasks/flaky/examples", who: "alice", body: ex("flaky.c1", "Fine.", "positive"),
				status: 201, want: map[string]any{"example.model_wrong": false}, save: map[string]string{"answered": "example.id"}},
			{name: "rescore anonymous", method: "POST", path: "/api/v1/examples/{timeout}/rescore", status: 401},
			{name: "rescore by another user", method: "POST", path: "/api/v1/examples/{timeout}/rescore", who: "bob", status: 404},
			{name: "rescore", method: "POST", path: "/api/v1/examples/{timeout}/rescore", who: "alice", status: 200,
				want: map[string]any{"example.id": equalVar("timeout"), "example.model_wrong": true, "example.model_error": absent,
					"example.model.name": "good", "example.model_output.label": "positive", "example.input.statement": statement}},
			{name: "rescore twice", method: "POST", path: "/api/v1/examples/{timeout}/rescore", who: "alice", status: 409},
			{name: "rescore an answered example", method: "POST", path: "/api/v1/examples/{answered}/rescore", who: "alice", status: 409},
			{name: "rescore a missing example", method: "POST", path: "/api/v1/examples/99999999/rescore", who: "admin", status: 404},
			{name: "the rescored example is due for validation", method: "GET", path: "/api/v1/tasks/flaky/validations/next", who: "bob", status: 200,
				want: map[string]any{"example.id": equalVar("timeout")}},
		})
		e.WantStats(t, "flaky", 1, 5, 1, 0, 0)
		e.run(t, []scenario{
			{name: "models anonymous: none published", method: "GET", path: "/api/v1/tasks/flaky/models", status: 200,
				want: map[string]any{"models": length(0)}},
			{name: "models for a user", method: "GET", path: "/api/v1/tasks/flaky/models", who: "alice", status: 200,
				want: map[string]any{"models": length(0)}},
			{name: "models for the owner", method: "GET", path: "/api/v1/tasks/flaky/models", who: "admin", status: 200,
				want: map[string]any{"models": length(5), "models[0].name": "flaky-fake", "models[0].kind": "dynalab", "models[0].published": false,
					"models[4].name": "good", "models[4].id": itoa(good)}},
			{name: "models of a missing task", method: "GET", path: "/api/v1/tasks/nope/models", status: 404},
		})
	})
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
