package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
)

// ownedBy makes the user an owner of the task (there is no route for that yet).
func (e *env) ownedBy(t *testing.T, code, user string) {
	t.Helper()
	if err := e.Service.Store.AddTaskOwner(context.Background(), e.Task(t, code).ID, e.users[user].ID); err != nil {
		t.Fatal(err)
	}
}

func TestTasks(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		badConfig := "context: 5\ninput: []\n"
		e.run(t, []scenario{
			{name: "list anonymous", method: "GET", path: "/api/v1/tasks", status: 200,
				want: map[string]any{"tasks": length(4), "tasks[0].code": "sentiment", "tasks[0].current_round": 1, "tasks[0].name": present,
					"tasks[1].code": "nli", "tasks[2].code": "qa", "tasks[3].code": "hs"}},
			{name: "get", method: "GET", path: "/api/v1/tasks/sentiment", status: 200,
				want: map[string]any{"code": "sentiment", "current_round": 1, "config.model_wrong_metric.type": "exact_match",
					"rounds": length(1), "rounds[0].number": 1, "rounds[0].status": "open", "rounds[0].models": length(1),
					"rounds[0].stats.collected": 0, "rounds[0].stats.mer": 0.0}},
			{name: "get unknown", method: "GET", path: "/api/v1/tasks/nope", status: 404, want: map[string]any{"error.code": "not_found"}},
			{name: "the demo model is published", method: "GET", path: "/api/v1/tasks/sentiment/models", status: 200,
				want: map[string]any{"models": length(2), "models[0].kind": "builtin", "models[0].published": true, "models[0].card": present,
					"models[1].name": "sentiment-prior-baseline"}},
			{name: "create anonymous", method: "POST", path: "/api/v1/tasks",
				body: map[string]any{"code": "t1", "name": "T1", "config": sentimentConfig}, status: 401},
			{name: "create bad token", method: "POST", path: "/api/v1/tasks", who: "bad",
				body: map[string]any{"code": "t1", "name": "T1", "config": sentimentConfig}, status: 401},
			{name: "create as user", method: "POST", path: "/api/v1/tasks", who: "alice",
				body: map[string]any{"code": "t1", "name": "T1", "config": sentimentConfig}, status: 403,
				want: map[string]any{"error.code": "forbidden"}},
			{name: "create with a broken config lists every problem", method: "POST", path: "/api/v1/tasks", who: "admin",
				body: map[string]any{"code": "t1", "name": "T1", "config": badConfig}, status: 422,
				want: map[string]any{"error.code": "invalid", "error.field": "config.context", "error.details[1].field": "config.input",
					"error.details[2]": present},
				check: func(t *testing.T, e *env, r *servertest.Response) {
					for i := 0; ; i++ {
						f, ok := r.Get(fmt.Sprintf("error.details[%d].field", i))
						if !ok {
							break
						}
						if s, _ := f.(string); !strings.HasPrefix(s, "config.") {
							t.Errorf("problem %d at %v, want a config.* path", i, f)
						}
					}
				}},
			{name: "create lists code, name and config problems together", method: "POST", path: "/api/v1/tasks", who: "admin",
				body: map[string]any{"code": "Bad Code", "name": " ", "config": badConfig}, status: 422,
				want: map[string]any{"error.details[0].field": "code", "error.details[1].field": "name", "error.details[2].field": "config.context"}},
			{name: "create without config", method: "POST", path: "/api/v1/tasks", who: "admin",
				body: map[string]any{"code": "t1", "name": "T1"}, status: 422, want: map[string]any{"error.field": "config"}},
			{name: "create with a number for config", method: "POST", path: "/api/v1/tasks", who: "admin",
				body: map[string]any{"code": "t1", "name": "T1", "config": 5}, status: 422, want: map[string]any{"error.field": "config"}},
			{name: "create with YAML", method: "POST", path: "/api/v1/tasks", who: "admin",
				body: map[string]any{"code": "t1", "name": "T1", "description": "d", "config": sentimentConfig + "custom_key: kept\n"}, status: 201,
				want: map[string]any{"code": "t1", "current_round": 1, "rounds": length(1), "rounds[0].number": 1, "rounds[0].models": length(0),
					"config.input[1].labels": length(3), "config.custom_key": "kept", "config_source": contains{"custom_key: kept"},
					"warnings": contains{map[string]any{"field": "config.custom_key", "message": present}}}},
			{name: "create with NUL in the name", method: "POST", path: "/api/v1/tasks", who: "admin",
				body: map[string]any{"code": "t9", "name": "T\x009", "config": sentimentConfig}, status: 422, want: map[string]any{"error.field": "name"}},
			{name: "create duplicate code", method: "POST", path: "/api/v1/tasks", who: "admin",
				body: map[string]any{"code": "t1", "name": "T1 again", "config": sentimentConfig}, status: 409,
				want: map[string]any{"error.code": "conflict", "error.field": "code"}},
			{name: "create with a JSON object config", method: "POST", path: "/api/v1/tasks", who: "admin",
				body: map[string]any{"code": "t2", "name": "T2", "config": map[string]any{
					"context":            []any{map[string]any{"name": "context", "type": "string"}},
					"input":              []any{map[string]any{"name": "label", "type": "multiclass", "labels": []any{"a", "b"}}},
					"output":             []any{map[string]any{"name": "label"}},
					"model_wrong_metric": map[string]any{"type": "exact_match", "reference_names": []any{"label"}},
					"perf_metric":        map[string]any{"type": "accuracy", "reference_name": "label"},
				}}, status: 201, want: map[string]any{"code": "t2", "config.input[0].labels": length(2)}},
			{name: "list has the new tasks", method: "GET", path: "/api/v1/tasks", status: 200,
				want: map[string]any{"tasks": length(6), "tasks[4].code": "t1", "tasks[4].description": "d", "tasks[5].code": "t2"}},
			{name: "get created", method: "GET", path: "/api/v1/tasks/t1", status: 200,
				want: map[string]any{"config.custom_key": "kept", "settings.num_matching_validations": 3, "settings.context_strategy": "least_used"}},
		})
		e.ownedBy(t, "t1", "bob")
		// settings is a full settings object (PUT replaces them all) with the changes.
		settings := func(changes ...any) map[string]any {
			m := map[string]any{"num_matching_validations": 3, "context_strategy": "least_used", "max_examples_per_day": 0,
				"validate_non_fooling": false, "hidden": false, "model_timeout_ms": 5000}
			for i := 0; i < len(changes); i += 2 {
				m[changes[i].(string)] = changes[i+1]
			}
			return m
		}
		e.run(t, []scenario{
			{name: "put config anonymous", method: "PUT", path: "/api/v1/tasks/t1/config", body: map[string]any{"config": sentimentConfig}, status: 401},
			{name: "put config non-owner", method: "PUT", path: "/api/v1/tasks/t1/config", who: "alice",
				body: map[string]any{"config": sentimentConfig}, status: 403, want: map[string]any{"error.code": "forbidden"}},
			{name: "put config owner", method: "PUT", path: "/api/v1/tasks/t1/config", who: "bob",
				body: map[string]any{"config": "# second revision\n" + sentimentConfig}, status: 200,
				want: map[string]any{"config_source": contains{"# second revision"}, "config.custom_key": absent}},
			{name: "put broken config", method: "PUT", path: "/api/v1/tasks/t1/config", who: "bob",
				body: map[string]any{"config": badConfig}, status: 422,
				want: map[string]any{"error.code": "invalid", "error.details[1].field": contains{"config."}}},
			{name: "broken config not stored", method: "GET", path: "/api/v1/tasks/t1", status: 200,
				want: map[string]any{"config_source": contains{"# second revision"}}},
			{name: "put config unknown task", method: "PUT", path: "/api/v1/tasks/nope/config", who: "admin",
				body: map[string]any{"config": sentimentConfig}, status: 404},
			{name: "owner of t1 is not owner of t2", method: "PUT", path: "/api/v1/tasks/t2/config", who: "bob",
				body: map[string]any{"config": sentimentConfig}, status: 403},
			{name: "bob's roles", method: "GET", path: "/api/v1/me", who: "bob", status: 200,
				want: map[string]any{"roles": contains{"owner:t1"}}},
			{name: "settings non-owner", method: "PUT", path: "/api/v1/tasks/t1/settings", who: "alice",
				body: settings("num_matching_validations", 2), status: 403},
			{name: "settings anonymous", method: "PUT", path: "/api/v1/tasks/t1/settings",
				body: settings("num_matching_validations", 2), status: 401},
			{name: "settings owner", method: "PUT", path: "/api/v1/tasks/t1/settings", who: "bob",
				body: settings("num_matching_validations", 2, "context_strategy", "uniform", "max_examples_per_day", 7,
					"validate_non_fooling", true, "model_timeout_ms", 1500), status: 200,
				want: map[string]any{"settings.num_matching_validations": 2, "settings.context_strategy": "uniform",
					"settings.max_examples_per_day": 7, "settings.validate_non_fooling": true, "settings.model_timeout_ms": 1500}},
			{name: "settings kept", method: "GET", path: "/api/v1/tasks/t1", status: 200,
				want: map[string]any{"settings.num_matching_validations": 2, "settings.context_strategy": "uniform"}},
			{name: "settings bad strategy", method: "PUT", path: "/api/v1/tasks/t1/settings", who: "bob",
				body: settings("context_strategy", "newest"), status: 422,
				want: map[string]any{"error.code": "invalid", "error.field": contains{"context_strategy"}}},
			{name: "settings bad N", method: "PUT", path: "/api/v1/tasks/t1/settings", who: "bob",
				body: settings("num_matching_validations", 101), status: 422,
				want: map[string]any{"error.field": contains{"num_matching_validations"}}},
			{name: "settings bad timeout", method: "PUT", path: "/api/v1/tasks/t1/settings", who: "bob",
				body: settings("model_timeout_ms", 120001), status: 422, want: map[string]any{"error.field": contains{"model_timeout_ms"}}},
			{name: "settings negative cap", method: "PUT", path: "/api/v1/tasks/t1/settings", who: "bob",
				body: settings("max_examples_per_day", -1), status: 422, want: map[string]any{"error.field": contains{"max_examples_per_day"}}},
			{name: "settings missing a field", method: "PUT", path: "/api/v1/tasks/t1/settings", who: "bob",
				body: map[string]any{"num_matching_validations": 1}, status: 422, want: map[string]any{"error.code": "invalid"}},
			{name: "bad settings not stored", method: "GET", path: "/api/v1/tasks/t1", status: 200,
				want: map[string]any{"settings.num_matching_validations": 2, "settings.model_timeout_ms": 1500}},
			{name: "hide t1", method: "PUT", path: "/api/v1/tasks/t1/settings", who: "bob", body: settings("hidden", true), status: 200,
				want: map[string]any{"settings.hidden": true}},
			{name: "hidden task not listed for anonymous", method: "GET", path: "/api/v1/tasks", status: 200,
				want: map[string]any{"tasks": length(5)}},
			{name: "hidden task not listed for alice", method: "GET", path: "/api/v1/tasks", who: "alice", status: 200,
				want: map[string]any{"tasks": length(5)}},
			{name: "hidden task listed for its owner", method: "GET", path: "/api/v1/tasks", who: "bob", status: 200,
				want: map[string]any{"tasks": length(6)}},
			{name: "hidden task listed for admin", method: "GET", path: "/api/v1/tasks", who: "admin", status: 200,
				want: map[string]any{"tasks": length(6)}},
			{name: "hidden task is 404 for alice", method: "GET", path: "/api/v1/tasks/t1", who: "alice", status: 404},
			{name: "hidden task rounds are 404 for anonymous", method: "GET", path: "/api/v1/tasks/t1/rounds/1", status: 404},
			{name: "hidden task is visible to its owner", method: "GET", path: "/api/v1/tasks/t1", who: "bob", status: 200},
		})
		e.WantStats(t, "t1", 1, 0, 0, 0, 0)
		e.WantStats(t, "sentiment", 1, 0, 0, 0, 0)
	})
}

func TestRoundsAndContexts(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		model := e.newTask(t, "sent", sentimentConfig, nil, servertest.Says("positive", sentimentLabels...), 3)
		e.ownedBy(t, "sent", "bob")
		other := e.AddModel(t, "sentiment", "not-sent", servertest.Says("positive", sentimentLabels...))
		second := e.AddModel(t, "sent", "second", servertest.Says("negative", sentimentLabels...))
		e.vars["model"], e.vars["other"], e.vars["second"] = fmt.Sprint(model), fmt.Sprint(other), fmt.Sprint(second)
		jsonl := func(lines ...string) servertest.Raw {
			return servertest.Raw{ContentType: "application/x-ndjson", Body: []byte(strings.Join(lines, "\n"))}
		}
		good := func(tag string) string {
			return `{"context":{"context":"A context tagged ` + tag + `."},"tag":"` + tag + `"}`
		}
		e.run(t, []scenario{
			{name: "list rounds", method: "GET", path: "/api/v1/tasks/sent/rounds", status: 200,
				want: map[string]any{"rounds": length(1), "rounds[0].number": 1, "rounds[0].status": "open",
					"rounds[0].models": []any{e.vars["model"]}, "rounds[0].stats.collected": 0, "rounds[0].stats.vmer": 0.0}},
			{name: "list rounds unknown task", method: "GET", path: "/api/v1/tasks/nope/rounds", status: 404},
			{name: "get round", method: "GET", path: "/api/v1/tasks/sent/rounds/1", status: 200,
				want: map[string]any{"number": 1, "status": "open", "closed_at": nil, "stats.fooled": 0, "stats.verified_fooled": 0, "stats.rejected": 0}},
			{name: "get missing round", method: "GET", path: "/api/v1/tasks/sent/rounds/2", status: 404, want: map[string]any{"error.code": "not_found"}},
			{name: "get round 0", method: "GET", path: "/api/v1/tasks/sent/rounds/0", status: 422},
			{name: "get round abc", method: "GET", path: "/api/v1/tasks/sent/rounds/abc", status: 422},
			{name: "models non-owner", method: "PUT", path: "/api/v1/tasks/sent/rounds/1/models", who: "alice",
				body: map[string]any{"models": []string{e.vars["model"]}}, status: 403},
			{name: "models anonymous", method: "PUT", path: "/api/v1/tasks/sent/rounds/1/models",
				body: map[string]any{"models": []string{e.vars["model"]}}, status: 401},
			{name: "models of another task", method: "PUT", path: "/api/v1/tasks/sent/rounds/1/models", who: "bob",
				body: map[string]any{"models": []string{e.vars["model"], e.vars["other"]}}, status: 422,
				want: map[string]any{"error.code": "invalid", "error.field": "models[1]"}},
			{name: "unknown model", method: "PUT", path: "/api/v1/tasks/sent/rounds/1/models", who: "bob",
				body: map[string]any{"models": []string{"999999"}}, status: 422, want: map[string]any{"error.field": "models[0]"}},
			{name: "malformed model id", method: "PUT", path: "/api/v1/tasks/sent/rounds/1/models", who: "bob",
				body: map[string]any{"models": []string{"abc"}}, status: 422, want: map[string]any{"error.field": "models[0]"}},
			{name: "model listed twice", method: "PUT", path: "/api/v1/tasks/sent/rounds/1/models", who: "bob",
				body: map[string]any{"models": []string{e.vars["model"], e.vars["model"]}}, status: 422, want: map[string]any{"error.field": "models[1]"}},
			{name: "models of a missing round", method: "PUT", path: "/api/v1/tasks/sent/rounds/5/models", who: "bob",
				body: map[string]any{"models": []string{e.vars["model"]}}, status: 404},
			{name: "failed updates changed nothing", method: "GET", path: "/api/v1/tasks/sent/rounds/1", status: 200,
				want: map[string]any{"models": []any{e.vars["model"]}}},
			{name: "models owner", method: "PUT", path: "/api/v1/tasks/sent/rounds/1/models", who: "bob",
				body: map[string]any{"models": []string{e.vars["model"], e.vars["second"]}}, status: 200,
				want: map[string]any{"models": []any{e.vars["model"], e.vars["second"]}}},
			{name: "models back", method: "PUT", path: "/api/v1/tasks/sent/rounds/1/models", who: "admin",
				body: map[string]any{"models": []string{e.vars["model"]}}, status: 200, want: map[string]any{"models": length(1)}},

			{name: "upload non-owner", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "alice",
				body: jsonl(good("x1")), status: 403},
			{name: "upload anonymous", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", body: jsonl(good("x1")), status: 401},
			{name: "upload", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "bob",
				body: jsonl(good("up"), "", good("up"), "   ", good("up2")), status: 201, want: map[string]any{"created": 3}},
			{name: "upload names the first bad line", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "bob",
				body: jsonl(good("bad-batch"), good("bad-batch"), `{"context":{}}`, `{"nope`), status: 422,
				want: map[string]any{"error.code": "invalid", "error.field": "line 3", "error.message": contains{"context"}}},
			{name: "nothing stored from the bad upload", method: "GET", path: "/api/v1/tasks/sent/context?tag=bad-batch", who: "alice", status: 404},
			{name: "upload syntax error line", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "bob",
				body: jsonl("", "", `{"context": {"context": "x"`), status: 422, want: map[string]any{"error.field": "line 3"}},
			{name: "upload unknown key", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "bob",
				body: jsonl(`{"context":{"context":"x"},"colour":"red"}`), status: 422, want: map[string]any{"error.field": "line 1"}},
			{name: "upload wrong context field type", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "bob",
				body: jsonl(good("a"), `{"context":{"context":5}}`), status: 422, want: map[string]any{"error.field": "line 2"}},
			{name: "upload two values on a line", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "bob",
				body: jsonl(good("a") + " " + good("b")), status: 422, want: map[string]any{"error.field": "line 1"}},
			{name: "upload invalid UTF-8", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "bob",
				body: jsonl(good("a"), "{\"context\":{\"context\":\"bad \xff byte\"}}"), status: 422, want: map[string]any{"error.field": "line 2"}},
			{name: "upload NUL", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "bob",
				body: jsonl(good("a"), `{"context":{"context":"nul \u0000"}}`), status: 422, want: map[string]any{"error.field": "line 2"}},
			{name: "upload NUL in the tag", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "bob",
				body: jsonl(`{"context":{"context":"x"},"tag":"\u0000"}`), status: 422, want: map[string]any{"error.field": "line 1"}},
			{name: "upload empty", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "bob",
				body: jsonl("", " "), status: 422, want: map[string]any{"error.code": "invalid"}},
			{name: "upload line over 1 MB", method: "POST", path: "/api/v1/tasks/sent/rounds/1/contexts", who: "bob",
				body: jsonl(good("a"), `{"context":{"context":"`+strings.Repeat("x", 1<<20)+`"}}`), status: 413,
				want: map[string]any{"error.code": "too_large", "error.field": "line 2"}},
			{name: "upload to a missing round", method: "POST", path: "/api/v1/tasks/sent/rounds/7/contexts", who: "bob",
				body: jsonl(good("a")), status: 404},
			{name: "upload to a missing task", method: "POST", path: "/api/v1/tasks/nope/rounds/1/contexts", who: "admin",
				body: jsonl(good("a")), status: 404},

			{name: "context anonymous", method: "GET", path: "/api/v1/tasks/sent/context", status: 401},
			{name: "context", method: "GET", path: "/api/v1/tasks/sent/context", who: "alice", status: 200,
				want: map[string]any{"id": present, "context.context": present, "round": 1}},
			{name: "context by tag", method: "GET", path: "/api/v1/tasks/sent/context?tag=up2", who: "alice", status: 200,
				want: map[string]any{"tag": "up2", "context.context": "A context tagged up2."}},
			{name: "context by tag and strategy", method: "GET", path: "/api/v1/tasks/sent/context?tag=c2&strategy=uniform", who: "alice", status: 200,
				want: map[string]any{"tag": "c2", "id": equalVar("sent.c2")}},
			{name: "context least_fooled", method: "GET", path: "/api/v1/tasks/sent/context?strategy=least_fooled", who: "alice", status: 200,
				want: map[string]any{"id": present}},
			{name: "context validation_failed before any rejection", method: "GET", path: "/api/v1/tasks/sent/context?strategy=validation_failed",
				who: "alice", status: 404},
			{name: "context least_used", method: "GET", path: "/api/v1/tasks/sent/context?strategy=least_used&tag=up", who: "alice", status: 200,
				want: map[string]any{"tag": "up"}},
			{name: "context unknown tag", method: "GET", path: "/api/v1/tasks/sent/context?tag=nope", who: "alice", status: 404,
				want: map[string]any{"error.code": "not_found", "error.field": "tag"}},
			{name: "context tag with NUL", method: "GET", path: "/api/v1/tasks/sent/context?tag=a%00", who: "alice", status: 422,
				want: map[string]any{"error.field": "tag"}},
			{name: "context bad strategy", method: "GET", path: "/api/v1/tasks/sent/context?strategy=newest", who: "alice", status: 422},
			{name: "context unknown task", method: "GET", path: "/api/v1/tasks/nope/context", who: "alice", status: 404},

			{name: "next round non-owner", method: "POST", path: "/api/v1/tasks/sent/rounds", who: "alice",
				body: map[string]any{"models": []string{e.vars["model"]}}, status: 403},
			{name: "next round anonymous", method: "POST", path: "/api/v1/tasks/sent/rounds",
				body: map[string]any{"models": []string{e.vars["model"]}}, status: 401},
			{name: "next round with another task's model", method: "POST", path: "/api/v1/tasks/sent/rounds", who: "bob",
				body: map[string]any{"models": []string{e.vars["other"]}}, status: 422, want: map[string]any{"error.field": "models[0]"}},
			{name: "still round 1", method: "GET", path: "/api/v1/tasks/sent", status: 200,
				want: map[string]any{"current_round": 1, "rounds": length(1)}},
			{name: "next round", method: "POST", path: "/api/v1/tasks/sent/rounds", who: "bob",
				body: map[string]any{"models": []string{e.vars["second"]}}, status: 201,
				want: map[string]any{"number": 2, "status": "open", "models": []any{e.vars["second"]}, "stats.collected": 0}},
			{name: "round 1 closed", method: "GET", path: "/api/v1/tasks/sent/rounds/1", status: 200,
				want: map[string]any{"status": "closed", "closed_at": present}},
			{name: "task moved on", method: "GET", path: "/api/v1/tasks/sent", status: 200,
				want: map[string]any{"current_round": 2, "rounds": length(2), "rounds[1].number": 2}},
			{name: "round 2 has no contexts yet", method: "GET", path: "/api/v1/tasks/sent/context", who: "alice", status: 404},
			{name: "upload to round 2", method: "POST", path: "/api/v1/tasks/sent/rounds/2/contexts", who: "bob",
				body: jsonl(good("r2")), status: 201, want: map[string]any{"created": 1}},
			{name: "round 2 context", method: "GET", path: "/api/v1/tasks/sent/context", who: "alice", status: 200,
				want: map[string]any{"tag": "r2", "round": 2}},
		})
		e.WantStats(t, "sent", 1, 0, 0, 0, 0)
	})
}

// TestContextUploadBodyLimit sends more than the 64 MB an upload may have.
func TestContextUploadBodyLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, enginesFirst(), servertest.NoDemo)
	e.newTask(t, "sent", sentimentConfig, nil, servertest.Says("positive", sentimentLabels...), 1)
	line := []byte(`{"context":{"context":"` + strings.Repeat("y", 1000) + `"}}` + "\n")
	body := make([]byte, 0, 64<<20+len(line))
	for len(body) <= 64<<20 {
		body = append(body, line...)
	}
	r := e.mustCall(t, http.StatusRequestEntityTooLarge, http.MethodPost, "/api/v1/tasks/sent/rounds/1/contexts", "admin",
		servertest.Raw{ContentType: "application/x-ndjson", Body: body})
	if r.String("error.code") != "too_large" {
		t.Errorf("error: %s", r.Body)
	}
}
