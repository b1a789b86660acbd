package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
	"github.com/dynabench-go/dynabench/internal/service"
)

// TestBrowserRelease drives Chromium through one turn of the retraining cycle as the owner: close
// round 1 by opening round 2, release round 1 (a wrong ratio first, shown next to its field), read the
// release, retrain a model for round 2, and see the "each round is harder" chart on the task page.
func TestBrowserRelease(t *testing.T) {
	srv := servertest.Start(t, "sqlite")
	ctx := context.Background()
	adm := admin(t, srv)
	// Round 1 of the sentiment task: alice writes 40 examples against the demo model, the owner
	// verifies them.
	alice := srv.User(t, "alice")
	au, err := srv.Service.Store.FindUserByID(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	pos := []string{"wonderful", "moving", "brilliant", "charming", "sharp"}
	neg := []string{"dull", "tedious", "clumsy", "forgettable", "boring"}
	for i := range 40 {
		c, err := srv.Service.PickContext(ctx, au, "sentiment", "", "")
		if err != nil {
			t.Fatal(err)
		}
		// Sentiment the words alone get wrong: negated praise, praised flops, plain facts.
		label, text := "", ""
		switch i % 3 {
		case 0:
			label, text = "positive", fmt.Sprintf("I expected it to be %s, but it was anything but: I loved it.", neg[i%5])
		case 1:
			label, text = "negative", fmt.Sprintf("Critics called it %s; I walked out after %d minutes.", pos[i%5], 20+i)
		default:
			label, text = "neutral", fmt.Sprintf("It runs %d minutes and opens in %d cinemas on Friday.", 80+i, 10+i)
		}
		e, err := srv.Service.CreateExample(ctx, au, "sentiment", service.NewExample{ContextID: c.ID,
			Input: map[string]any{"statement": text, "label": label}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Service.Validate(ctx, adm, e.ID, service.NewValidation{Label: dynabench.LabelCorrect, Mode: dynabench.ModeOwner}); err != nil {
			t.Fatal(err)
		}
	}
	b := newTab(t, srv.URL)
	weights := map[string]weight{}
	b.open("/login")
	b.fill("#username", "admin")
	b.fill("#password", servertest.AdminPassword)
	b.do(chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(".task-card")))

	// Nothing is released yet: the task page says so.
	b.open("/tasks/sentiment")
	if got := b.text("#no-cycle"); !strings.Contains(got, "No round is released yet") {
		t.Errorf("task page before a release: %q", got)
	}

	// Close round 1 by opening round 2, with the same models.
	b.open("/tasks/sentiment/rounds")
	b.do(chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
		chromedp.Click(chromedp.CSS(`form[action="/tasks/sentiment/rounds"] button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS("#round-1")))
	if got := b.text("p.notice"); !strings.Contains(got, "Round 2 is open") {
		t.Errorf("after opening round 2: %q", got)
	}

	// Release round 1 with ratios that do not add up: the problem is next to the ratios, the values stay.
	b.fill("#rel1-train", "0.7")
	b.fill("#rel1-dev", "0.2")
	b.fill("#rel1-test", "0.2")
	b.fill("#rel1-license", "cc-by-4.0")
	b.do(chromedp.Click(chromedp.CSS(`#round-1 button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS("#err-rel1-ratios[role=alert]")))
	if got := b.text("#err-rel1-ratios"); !strings.Contains(got, "must be 1") {
		t.Errorf("ratio problem: %q", got)
	}
	if got := eval[string](b, `document.getElementById('rel1-license').value`); got != "cc-by-4.0" {
		t.Errorf("the license was lost: %q", got)
	}
	weights["rounds"] = b.weight()
	b.do(chromedp.ScrollIntoView(chromedp.CSS("#round-1")))
	b.screenshot("rounds-release", true)
	b.fill("#rel1-train", "0.6")
	b.do(chromedp.Click(chromedp.CSS(`#round-1 button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS("#release-1-v1")))
	if got := b.text("p.notice"); !strings.Contains(got, "Round 1 released as version 1: 40 examples") {
		t.Errorf("after the release: %q", got)
	}
	if got := b.text("#release-1-v1 .splits"); !strings.Contains(got, "train") || !strings.Contains(got, "negative") {
		t.Errorf("splits table: %q", got)
	}
	if got := b.text("#release-1-v1 .datasheet pre"); !strings.Contains(got, "Datasheet") && !strings.Contains(got, "#") {
		t.Errorf("datasheet: %q", got)
	}
	weights["releases"] = b.weight()
	b.screenshot("releases", true)
	// The release's README is shown as text.
	b.do(chromedp.Click(chromedp.CSS(`#release-1-v1 .files a[href$="path=README.md"]:not([download])`)), chromedp.WaitReady(chromedp.CSS("body pre")))
	if got := eval[string](b, `document.contentType`); got != "text/plain" {
		t.Errorf("README.md shown as %q", got)
	}

	// Retrain for round 2: the page reports the model and links to it.
	b.open("/tasks/sentiment/rounds")
	b.do(chromedp.Click(chromedp.CSS(`#retrain-form button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS("#trained")))
	if got := b.text("#trained"); !strings.Contains(got, "sentiment-builtin-r2") || !strings.Contains(got, "loop of round 2") {
		t.Errorf("after retraining: %q", got)
	}

	// Wait until both rounds' models are scored on round 1's test split (the worker evaluates them).
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := srv.Service.RoundCycle(ctx, adm, "sentiment")
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Rounds) == 2 && len(c.Rounds[0].Scores) > 0 && len(c.Rounds[1].Scores) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cycle is not scored after 60 s: %+v", c)
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.open("/tasks/sentiment")
	if n := eval[int](b, `document.querySelectorAll('.cycle-scores circle.dot').length`); n != 2 {
		t.Errorf("cycle chart: %d points, want 2", n)
	}
	if n := eval[int](b, `document.querySelectorAll('.cycle-vmer rect.c-vbar').length`); n != 2 {
		t.Errorf("vMER chart: %d bars, want 2", n)
	}
	if got := b.text(".cycle-table tbody"); !strings.Contains(got, "sentiment-builtin-r2") || !strings.Contains(got, "%") {
		t.Errorf("cycle table: %q", got)
	}
	weights["task-cycle"] = b.weight()
	b.do(chromedp.ScrollIntoView(chromedp.CSS("#cycle")))
	b.screenshot("task-cycle", true)

	for _, name := range sortedKeys(weights) {
		w := weights[name]
		t.Logf("page weight %-10s %6.1f KB on the wire (%6.1f KB uncompressed)", name, w.Encoded/1024, w.Decoded/1024)
		if w.Encoded > 150*1024 {
			t.Errorf("%s weighs %.1f KB on the wire", name, w.Encoded/1024)
		}
	}
	t.Logf("screenshots in %s: %s", b.dir, strings.Join(b.shot, " "))
}
