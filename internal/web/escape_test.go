package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
)

// Text from users, contexts and models is escaped everywhere it is shown.
func TestNoHTMLInjection(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, "sqlite")
	ctx := context.Background()
	adm := admin(t, srv)
	const evil = `<script>alert(1)</script>`
	const img = `<img src=x onerror=alert(2)>`
	// A context and a model answer carrying markup.
	ctxLine := `{"context":{"context":"Passage ` + strings.ReplaceAll(evil, `"`, `\"`) + ` with a span."},"tag":"evil"}`
	if _, err := srv.Service.UploadContexts(ctx, adm, "qa", 1, strings.NewReader(ctxLine)); err != nil {
		t.Fatal(err)
	}
	id := srv.AddModel(t, "qa", "evil-model", &servertest.Fake{Output: map[string]any{"answer": img, "conf": 0.5}})
	if _, err := srv.Service.SetRoundModels(ctx, adm, "qa", 1, []int64{id}, ""); err != nil {
		t.Fatal(err)
	}
	srv.User(t, "alice")
	srv.User(t, "bob")
	alice, bob := loggedIn(t, srv, "alice", "password-alice"), loggedIn(t, srv, "bob", "password-bob")

	pages := map[string]string{}
	create := alice.follow(t, "/tasks/qa/create?tag=evil")
	pages["create page (context)"] = create.Body
	form := url.Values{"context_id": {contextOf(t, create.Body)}, "in.question": {"What is it? " + img}, "in.answer": {"with a span"}}
	res := alice.postWith(t, "/tasks/qa/create", form, http.Header{"HX-Request": {"true"}})
	if res.Status != 200 {
		t.Fatalf("submit: %d\n%s", res.Status, res.Body)
	}
	pages["model answer"] = res.Body
	pages["validate page (example text)"] = bob.get(t, "/tasks/qa/validate").Body
	pages["register error (username)"] = newVisitor(srv).post(t, "/register",
		url.Values{"username": {evil}, "email": {"a@example.com"}, "password": {"password-123"}}).Body
	pages["tag filter"] = alice.get(t, "/tasks/qa/create?tag="+url.QueryEscape(evil)).Body
	// A published model whose name and card carry markup (the rules refuse such names; the store
	// does not), and a scoring dataset named with markup: model page, leaderboard, datasets, submit.
	qa := srv.Task(t, "qa")
	m := &dynabench.Model{TaskID: qa.ID, UserID: srv.AdminID, Name: img, Kind: dynabench.KindDynalab, URL: "http://fake.invalid",
		Card: "# Card\n" + evil, Published: true}
	if err := srv.Service.Store.CreateModel(ctx, m); err != nil {
		t.Fatal(err)
	}
	d := &dynabench.Dataset{TaskID: qa.ID, Name: evil, Access: dynabench.AccessScoring, SHA256: "00", Size: 1, CreatedBy: adm.ID}
	if err := srv.Service.Store.SaveDataset(ctx, d, []*dynabench.DatasetExample{{UID: "u1",
		Input: map[string]any{"question": "q", "context": "c"}, Gold: []string{"a"}}}); err != nil {
		t.Fatal(err)
	}
	pages["model page (name, card, dataset)"] = newVisitor(srv).get(t, fmt.Sprintf("/models/%d", m.ID)).Body
	pages["leaderboard (pending model, dataset slider)"] = alice.get(t, "/tasks/qa/leaderboard").Body
	pages["datasets page"] = alice.get(t, "/tasks/qa/datasets").Body
	pages["submit page (model list)"] = alice.get(t, "/tasks/qa/submit").Body
	for name, body := range pages {
		if strings.Contains(body, evil) || strings.Contains(body, img) {
			t.Errorf("%s: markup from input is not escaped:\n%s", name, body)
		}
		if !strings.Contains(body, "&lt;") {
			t.Errorf("%s: the escaped text is missing:\n%s", name, body)
		}
	}
}
