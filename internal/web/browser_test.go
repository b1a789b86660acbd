package web_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dynabench-go/dynabench"
	"github.com/dynabench-go/dynabench/internal/server/servertest"
)

// chromium finds Debian's Chromium. Without it the browser tests skip, unless
// DYNABENCH_TEST_BROWSER=1 (CI sets it) makes them required.
func chromium(t *testing.T) string {
	for _, p := range []string{os.Getenv("DYNABENCH_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("DYNABENCH_TEST_BROWSER") == "1" {
		t.Fatal("DYNABENCH_TEST_BROWSER=1 but no Chromium found: apt-get install chromium (or set DYNABENCH_CHROMIUM)")
	}
	t.Skip("browser tests skipped: no Chromium (apt-get install chromium; DYNABENCH_TEST_BROWSER=1 makes them required)")
	return ""
}

// tab is a browser tab on the test server, saving screenshots as it goes.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string
	shot []string
}

func newTab(t *testing.T, base string) *tab {
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-gpu", true), chromedp.Flag("hide-scrollbars", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	dir := os.Getenv("DYNABENCH_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := &tab{t: t, ctx: ctx, base: base, dir: dir}
	b.do(chromedp.EmulateViewport(1280, 900))
	return b
}

func (b *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

func (b *tab) open(path string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.base+path), chromedp.WaitReady(chromedp.CSS("footer")))
}

func (b *tab) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func eval[T any](b *tab, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluate %q: %v", js, err)
	}
	return v
}

// screenshot saves the whole page as <name>.png (and at 375 px wide as <name>-375.png when narrow).
func (b *tab) screenshot(name string, narrow bool) {
	b.t.Helper()
	save := func(file string) {
		png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			b.t.Fatalf("screenshot: %v", err)
		}
		p := filepath.Join(b.dir, file)
		if err := os.WriteFile(p, png, 0o644); err != nil {
			b.t.Fatal(err)
		}
		b.shot = append(b.shot, p)
	}
	save(name + ".png")
	if narrow {
		b.do(chromedp.EmulateViewport(375, 800, chromedp.EmulateScale(1)))
		// Nothing may be wider than the screen at 375 px.
		if w := eval[float64](b, `document.documentElement.scrollWidth`); w > 376 {
			b.t.Errorf("%s: the page is %v px wide at a 375 px viewport", name, w)
		}
		save(name + "-375.png")
		b.do(chromedp.EmulateViewport(1280, 900))
	}
}

// weight is what the page's transfer costs: the document and every resource, as the browser
// counts them (encoded = on the wire, decoded = after gzip).
type weight struct{ Encoded, Decoded float64 }

func (b *tab) weight() weight {
	return eval[weight](b, `(() => { let e = 0, d = 0;
		for (const r of performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))) {
			e += r.encodedBodySize; d += r.decodedBodySize; }
		return {Encoded: e, Decoded: d}; })()`)
}

// submitTimed clicks the create form's submit button and returns the milliseconds from the click
// until the model's answer is in the page (htmx settled the swap of #result with a verdict in it).
func (b *tab) submitTimed() float64 {
	b.t.Helper()
	b.do(chromedp.Evaluate[chromedp.Void](`(() => {
		window.__lat = null;
		const old = document.getElementById('verdict');
		if (old) old.removeAttribute('id');
		const done = () => { if (document.getElementById('verdict') && window.__lat === null) window.__lat = performance.now() - window.__t0; };
		new MutationObserver(done).observe(document.body, {childList: true, subtree: true});
		window.__t0 = performance.now();
		document.getElementById('submit').click();
	})()`))
	b.do(chromedp.WaitVisible(chromedp.CSS("#verdict")))
	return eval[float64](b, `window.__lat`)
}

func (b *tab) fill(sel, value string) {
	b.t.Helper()
	b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).value = ''`, sel)),
		chromedp.SendKeys(chromedp.CSS(sel), value))
}

// TestBrowser drives Chromium through the whole loop: two people register; the first writes one
// example that fools the model and one that does not; the second validates them; the round's
// statistics and chart change; an owner uploads contexts and fixes a broken config.
func TestBrowser(t *testing.T) {
	srv := servertest.Start(t, "sqlite")
	b := newTab(t, srv.URL)
	ctx := context.Background()
	adm := admin(t, srv)
	// One matching validation settles an example, so the second user's votes move the stats; the
	// example that did not fool the model is validated too.
	st := srv.Task(t, "sentiment").Settings
	st.NumMatchingValidations, st.ValidateNonFooling = 1, true
	if _, err := srv.Service.UpdateSettings(ctx, adm, "sentiment", st); err != nil {
		t.Fatal(err)
	}
	weights := map[string]weight{}

	// The home page, anonymous.
	b.open("/")
	weights["home"] = b.weight()
	b.screenshot("home", true)
	b.open("/tasks/sentiment")
	chartBefore := eval[int](b, `document.querySelectorAll('.chart rect.c-collected').length`)
	collectedBefore := b.text("tbody tr td:nth-child(3)")
	weights["task"] = b.weight()
	b.screenshot("task-before", false)

	// 1. Alice registers, with one mistake first: the problem is shown next to the field.
	b.open("/register")
	b.fill("#username", "alice")
	b.fill("#email", "alice-at-example")
	b.fill("#password", "alice-pass-1")
	b.do(chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("#err-email")))
	if got := b.text("#err-email"); !strings.Contains(got, "not a valid email") {
		t.Errorf("email problem: %q", got)
	}
	b.screenshot("register-error", true)
	b.fill("#email", "alice@example.com")
	b.fill("#password", "alice-pass-1")
	b.do(chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(".task-card")))

	// 2. She writes on the sentiment task. Her text survives a reload before she submits.
	b.open("/tasks/sentiment/create")
	b.fill("#in-statement", "The film was long, but the ending made up for every minute of it.")
	b.do(chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("footer")))
	if got := eval[string](b, `document.getElementById('in-statement').value`); !strings.Contains(got, "ending made up") {
		t.Errorf("the draft was lost on reload: %q", got)
	}
	weights["create"] = b.weight()
	// The label by keyboard shortcut (focus out of the text first), then submit.
	b.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`), chromedp.KeyEvent("1"))
	if !eval[bool](b, `document.getElementById('in-label-0').checked`) {
		t.Error("the shortcut 1 did not pick the first label")
	}
	var lat []float64
	lat = append(lat, b.submitTimed())
	first := b.text("#outcome")
	modelSaid := b.text("#model-label")
	b.screenshot("create-result-1", true)
	// The second example: whichever outcome the first was not.
	labels := []string{"positive", "negative", "neutral"}
	pick := modelSaid // not fooled
	if !strings.Contains(first, "fooled") {
		pick = labels[(slices.Index(labels, modelSaid)+1)%3] // fooled
	}
	b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf("label[for=in-label-%d]", slices.Index(labels, pick)))))
	lat = append(lat, b.submitTimed())
	second := b.text("#outcome")
	outcomes := []string{first, second}
	if !slices.ContainsFunc(outcomes, func(s string) bool { return strings.Contains(s, "You fooled the model") }) ||
		!slices.ContainsFunc(outcomes, func(s string) bool { return strings.Contains(s, "The model got it right") }) {
		t.Errorf("outcomes %q: want one fooled and one not", outcomes)
	}
	// An explanation, saved in place.
	expl := "#meta-model_explanation_wrong"
	if strings.Contains(second, "right") {
		expl = "#meta-model_explanation_right"
	}
	b.fill(expl, "Faint praise.")
	b.do(chromedp.Click(chromedp.CSS("form.explain button")), chromedp.WaitVisible(chromedp.CSS("#result .notice")))
	b.screenshot("create-result-2", true)
	// Sandbox tries measure the latency a few more times without storing anything.
	b.do(chromedp.Click(chromedp.CSS("#sandbox")))
	for range 5 {
		lat = append(lat, b.submitTimed())
	}
	slices.Sort(lat)
	t.Logf("submit → model answer in the page (built-in model, %d submits): median %.1f ms, max %.1f ms, all %v",
		len(lat), lat[len(lat)/2], lat[len(lat)-1], lat)
	if lat[len(lat)/2] > 100 {
		t.Errorf("median submit → answer %.1f ms, want under 100 ms", lat[len(lat)/2])
	}
	b.do(chromedp.Click(chromedp.CSS("#sandbox")))
	if got := b.text("#score"); !strings.Contains(got, "of 2 submitted") {
		t.Errorf("score %q: want 2 submitted", got)
	}
	b.open("/profile")
	b.screenshot("profile", false)
	b.do(chromedp.Click(chromedp.CSS("button.linkish")), chromedp.WaitVisible(chromedp.CSS("a[href='/login']")))

	// 3. Bob registers and validates both; the model's answer shows only after each vote.
	b.open("/register")
	b.fill("#username", "bob")
	b.fill("#email", "bob@example.com")
	b.fill("#password", "bob-pass-123")
	b.do(chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(".task-card")))
	b.open("/tasks/sentiment/validate")
	weights["validate"] = b.weight()
	if n := eval[int](b, `document.querySelectorAll('#model-label, #verdict').length`); n != 0 {
		t.Error("the model's answer is shown before the vote")
	}
	b.screenshot("validate", true)
	for i := range 2 {
		b.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('last-vote')?.remove()`),
			chromedp.Click(chromedp.CSS("label[for=v-correct]")),
			chromedp.Click(chromedp.CSS("form[data-verdict-form] button[type=submit]")),
			chromedp.WaitVisible(chromedp.CSS("#last-vote")))
		if i == 0 {
			b.screenshot("validate-after-vote", false)
		}
	}
	b.do(chromedp.WaitVisible(chromedp.CSS("#nothing-left")))
	b.screenshot("validate-nothing-left", false)

	// 4. The round's stats and chart changed.
	b.open("/tasks/sentiment")
	collectedAfter := b.text("tbody tr td:nth-child(3)")
	verified := b.text("tbody tr td:nth-child(5)")
	if collectedBefore != "0" || collectedAfter != "2" || verified != "1" {
		t.Errorf("round 1: collected %s → %s, verified fooled %s; want 0 → 2, 1", collectedBefore, collectedAfter, verified)
	}
	if h := eval[float64](b, `document.querySelector('.chart rect.c-verified').height.baseVal.value`); h <= 0 || chartBefore != 1 {
		t.Errorf("the chart's verified bar has height %v (bars before: %d)", h, chartBefore)
	}
	if v := b.text("tbody tr td:nth-child(8)"); v != "50.0%" {
		t.Errorf("vMER %q, want 50.0%%", v)
	}
	b.screenshot("task-after", true)
	b.do(chromedp.Click(chromedp.CSS("button.linkish")), chromedp.WaitVisible(chromedp.CSS("a[href='/login']")))

	// 5. The owner (the admin) uploads contexts, one bad file first, then fixes a broken config.
	b.open("/login")
	b.fill("#username", "admin")
	b.fill("#password", servertest.AdminPassword)
	b.do(chromedp.Click(chromedp.CSS("button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(".task-card")))
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	good := filepath.Join(dir, "contexts.jsonl")
	os.WriteFile(bad, []byte(`{"context":{"context":"A fine line."}}`+"\n"+`{"context":{"text":"wrong field"}}`+"\n"), 0o644)
	os.WriteFile(good, []byte(`{"context":{"context":"A brand new prompt about trains."},"tag":"trains"}`+"\n"+
		`{"context":{"context":"Another one about boats."},"tag":"boats"}`+"\n"), 0o644)
	b.open("/tasks/sentiment/contexts")
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{bad}), chromedp.Click(chromedp.CSS("main form[enctype] button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#form-error")))
	if got := b.text("#form-error"); !strings.Contains(got, "line 2") {
		t.Errorf("upload error %q does not name line 2", got)
	}
	b.screenshot("owner-contexts-error", true)
	b.do(chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{good}), chromedp.Click(chromedp.CSS("main form[enctype] button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("p.notice")))
	if got := b.text("p.notice"); !strings.Contains(got, "2 contexts added") {
		t.Errorf("upload: %q", got)
	}
	b.open("/tasks/sentiment/settings")
	weights["settings"] = b.weight()
	orig := eval[string](b, `document.getElementById('config').value`)
	broken := strings.Replace(orig, "type: multiclass", "type: multiclas", 1)
	b.do(chromedp.SetValue(chromedp.CSS("#config"), broken), chromedp.Click(chromedp.CSS("form[action$='/config'] button")),
		chromedp.WaitVisible(chromedp.CSS("#config-problems")))
	problems := b.text("#config-problems")
	if !strings.Contains(problems, "config.input[1].type") || !strings.Contains(problems, "multiclas") {
		t.Errorf("config problems: %q", problems)
	}
	b.screenshot("owner-config-error", true)
	// Fix it from the message: the path names the field, the message the bad type.
	fixed := eval[string](b, `document.getElementById('config').value.replace('type: multiclas\n', 'type: multiclass\n')`)
	b.do(chromedp.SetValue(chromedp.CSS("#config"), fixed), chromedp.Click(chromedp.CSS("form[action$='/config'] button")),
		chromedp.WaitVisible(chromedp.CSS("p.notice")))
	if got := b.text("p.notice"); !strings.Contains(got, "Config saved") {
		t.Errorf("after the fix: %q", got)
	}
	b.screenshot("owner-settings", false)
	// A flagged example for the owner's review, and the remaining owner and admin pages.
	alice, err := srv.Service.Store.FindUserByUsername(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	exs, err := srv.Service.Store.FindExamples(ctx, dynabench.ExampleFilter{TaskID: srv.Task(t, "sentiment").ID})
	if err != nil || len(exs) == 0 {
		t.Fatalf("examples: %v", err)
	}
	if _, err := srv.Service.FlagExample(ctx, alice, exs[0].ID, "I picked the wrong label"); err != nil {
		t.Fatal(err)
	}
	b.open("/tasks/sentiment/flagged")
	b.screenshot("owner-flagged", false)
	b.do(chromedp.Click(chromedp.CSS("article.flagged button[value=incorrect]")), chromedp.WaitVisible(chromedp.CSS("p.notice")))
	b.open("/tasks/sentiment/rounds")
	b.screenshot("owner-rounds", false)
	b.open("/admin/users")
	b.screenshot("admin-users", true)
	b.open("/tasks/qa/create")
	// QA: select the answer in the passage with the mouse (a selection of the passage's first word).
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const p = document.querySelector('[data-select-for]');
		const r = document.createRange(); const n = p.firstChild; const w = n.textContent.indexOf(' ');
		r.setStart(n, 0); r.setEnd(n, w); const s = getSelection(); s.removeAllRanges(); s.addRange(r);
		p.dispatchEvent(new MouseEvent('mouseup', {bubbles: true})); })()`))
	if got := eval[string](b, `document.getElementById('in-answer').value`); got == "" {
		t.Error("selecting text in the QA passage did not fill the answer")
	}
	b.screenshot("create-qa", true)
	b.do(chromedp.Click(chromedp.CSS("button.linkish")), chromedp.WaitVisible(chromedp.CSS("a[href='/login']")))
	b.open("/login")
	weights["login"] = b.weight()
	b.screenshot("login", true)

	for _, name := range sortedKeys(weights) {
		w := weights[name]
		t.Logf("page weight %-9s %6.1f KB on the wire (%6.1f KB uncompressed)", name, w.Encoded/1024, w.Decoded/1024)
		if w.Encoded > 150*1024 {
			t.Errorf("%s weighs %.1f KB on the wire", name, w.Encoded/1024)
		}
	}
	t.Logf("screenshots in %s: %s", b.dir, strings.Join(b.shot, " "))
}
