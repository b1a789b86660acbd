package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dynabench-go/dynabench/internal/server/servertest"
)

// TestBrowserEvaluation drives Chromium through evaluation as a service: an owner uploads a
// dataset, the demo leaderboard shows its models with intervals, a weight slider updates the table
// in place (htmx), a model page shows its scores, and a model is submitted and followed on its page
// until its evaluation ends, without a reload.
func TestBrowserEvaluation(t *testing.T) {
	srv := servertest.Start(t, "sqlite")
	b := newTab(t, srv.URL)
	weights := map[string]weight{}

	// The owner (the admin) logs in and uploads a dataset.
	b.open("/login")
	b.fill("#username", "admin")
	b.fill("#password", servertest.AdminPassword)
	b.do(chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(".task-card")))
	file := filepath.Join(t.TempDir(), "extra.jsonl")
	os.WriteFile(file, []byte(`{"uid":"x1","statement":"A warm, funny and generous film.","label":"positive","tags":["short"]}`+"\n"+
		`{"uid":"x2","statement":"Two hours I will never get back.","label":"negative","tags":["short"]}`+"\n"+
		`{"uid":"x3","statement":"It was a film. It had actors in it.","label":"neutral"}`+"\n"), 0o644)
	b.open("/tasks/sentiment/datasets")
	b.fill("#d-name", "extra-checks")
	b.do(chromedp.SetValue(chromedp.CSS("#d-access"), "standard"),
		chromedp.SetUploadFiles(chromedp.CSS("#d-file"), []string{file}),
		chromedp.Click(chromedp.CSS("#dataset-form button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("p.notice")))
	if got := b.text("p.notice"); !strings.Contains(got, "extra-checks version 1 stored: 3 examples") {
		t.Errorf("upload: %q", got)
	}
	if got := b.text("#datasets"); !strings.Contains(got, "extra-checks") || !strings.Contains(got, "demo-dev") {
		t.Errorf("datasets table: %q", got)
	}
	weights["datasets"] = b.weight()
	b.screenshot("datasets", false)

	// The demo leaderboard: two ranked models, each with an interval in the table and a whisker.
	waitRanked(t, srv, "sentiment")
	b.open("/tasks/sentiment/leaderboard")
	weights["leaderboard"] = b.weight()
	if n := eval[int](b, `document.querySelectorAll('.board-table tbody tr').length`); n < 2 {
		t.Fatalf("leaderboard rows: %d", n)
	}
	if n := eval[int](b, `document.querySelectorAll('.board-chart g line.whisker').length`); n < 6 {
		t.Errorf("whiskers: %d lines", n)
	}
	if got := b.text(".board-table tbody tr td.num small"); !strings.Contains(got, "–") {
		t.Errorf("the Dynascore interval is not shown: %q", got)
	}
	b.screenshot("leaderboard", true)

	// Move the perf metric's slider: htmx swaps the table and the URL carries the weights.
	before := b.text(".board-table thead")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => {
		document.getElementById('board').setAttribute('data-old', '1');
		const s = document.getElementById('w-mw-macro_f1');
		s.value = '1'; s.dispatchEvent(new Event('input', {bubbles: true})); s.dispatchEvent(new Event('change', {bubbles: true}));
	})()`), chromedp.WaitReady(chromedp.CSS("#board:not([data-old])")))
	after := b.text(".board-table thead")
	if !strings.Contains(before, "weight 4") || !strings.Contains(after, "Macro F1 (%, weight 1)") {
		t.Errorf("the table did not follow the slider: before %q, after %q", before, after)
	}
	if q := eval[string](b, `location.search`); !strings.Contains(q, "metric_weights=") || !strings.Contains(q, "macro_f1%3A1") {
		t.Errorf("the URL does not carry the weights: %q", q)
	}
	if got := b.text("#w-mw-macro_f1-out"); got != "1" {
		t.Errorf("the slider's value shows %q", got)
	}

	// A model page, from the leaderboard.
	b.do(chromedp.Click(chromedp.CSS(".board-table tbody tr th a")), chromedp.WaitVisible(chromedp.CSS("#model-status")))
	if got := b.text("#model-status"); !strings.Contains(got, "completed") || !strings.Contains(got, "examples/s") {
		t.Errorf("model page status: %q", got)
	}
	weights["model"] = b.weight()
	b.screenshot("model", true)

	// Submit a model; its page follows the evaluation until it ends (the URL refuses connections:
	// the model's fault), without a reload.
	b.open("/tasks/sentiment/submit")
	b.fill("#m-name", "my-remote-model")
	b.do(chromedp.SetValue(chromedp.CSS("#m-kind"), "dynalab"))
	b.fill("#m-url", "http://127.0.0.1:9/predict")
	b.fill("#m-card", "# My remote model\n\nA sentiment classifier served over HTTP.")
	weights["submit"] = b.weight()
	b.screenshot("submit", true)
	b.do(chromedp.Click(chromedp.CSS("#submit-form button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("#model-status")))
	b.do(chromedp.Evaluate[chromedp.Void](`window.__same = true`))
	deadline := time.Now().Add(60 * time.Second)
	for eval[bool](b, `!!document.querySelector('#model-status[hx-trigger]')`) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if got := b.text("#model-status"); !strings.Contains(got, "failed") || !strings.Contains(got, "model's fault") {
		t.Errorf("the submitted model's status: %q", got)
	}
	if !eval[bool](b, `window.__same === true`) {
		t.Error("the model page reloaded instead of updating in place")
	}

	for _, name := range sortedKeys(weights) {
		w := weights[name]
		t.Logf("page weight %-11s %6.1f KB on the wire (%6.1f KB uncompressed)", name, w.Encoded/1024, w.Decoded/1024)
		if w.Encoded > 150*1024 {
			t.Errorf("%s weighs %.1f KB on the wire", name, w.Encoded/1024)
		}
	}
	t.Logf("screenshots in %s: %s", b.dir, strings.Join(b.shot, " "))
}
