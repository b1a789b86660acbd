// Dynabench in Go: the page behaviour htmx does not cover. No inline script anywhere (CSP).
// - keyboard shortcuts: [data-key] controls (1–9; Alt+digit while typing), Ctrl/Cmd+Enter submits [data-ctrl-enter] forms
// - QA span selection: a mouse selection in [data-select-for] fills the named input
// - drafts: fields of a [data-draft] form are kept in sessionStorage, so reloads and errors lose nothing
// - metadata fields with [data-when] are shown only for the verdict they apply to
// - [data-confirm] forms ask before submitting
// - range inputs with [data-output] show their value in the named element
// - [data-busy] forms mark their submit button busy (and disable it) while the server works
(function () {
  "use strict";

  function typing(el) {
    return el && (el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
      (el.tagName === "INPUT" && !/^(radio|checkbox|button|submit)$/.test(el.type)));
  }

  function submitForm(form) {
    if (form.requestSubmit) { form.requestSubmit(); } else { form.submit(); }
  }

  document.addEventListener("keydown", function (ev) {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "Enter") {
      var form = (ev.target.closest && ev.target.closest("form[data-ctrl-enter]")) || document.querySelector("form[data-ctrl-enter]");
      if (form) { ev.preventDefault(); submitForm(form); }
      return;
    }
    if (!/^[1-9]$/.test(ev.key) || ev.ctrlKey || ev.metaKey) { return; }
    if (typing(document.activeElement) && !ev.altKey) { return; }
    var scope = document.querySelector("form[data-ctrl-enter]") || document;
    var target = scope.querySelector('[data-key="' + ev.key + '"]');
    if (!target) { return; }
    ev.preventDefault();
    target.checked = true;
    target.dispatchEvent(new Event("change", { bubbles: true }));
  });

  // QA: the selected text of a passage becomes the answer.
  document.addEventListener("mouseup", function (ev) {
    var passage = ev.target.closest && ev.target.closest("[data-select-for]");
    if (!passage) { return; }
    var sel = window.getSelection();
    var text = sel ? sel.toString().trim() : "";
    if (!text || !passage.contains(sel.anchorNode)) { return; }
    var input = document.getElementById(passage.getAttribute("data-select-for"));
    if (!input) { return; }
    input.value = text;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });

  // Drafts.
  function draftFields(form) {
    return form.querySelectorAll("textarea, input[type=text], input[type=radio], input[type=checkbox]");
  }
  function saveDraft(form) {
    var key = form.getAttribute("data-draft"), data = {};
    draftFields(form).forEach(function (el) {
      if (el.type === "radio" || el.type === "checkbox") { if (el.checked) { data[el.name + "=" + el.value] = true; } }
      else { data[el.name] = el.value; }
    });
    try { sessionStorage.setItem(key, JSON.stringify(data)); } catch (e) { /* storage full or off: the server keeps the text on errors */ }
  }
  function restoreDraft(form) {
    var raw = null;
    try { raw = sessionStorage.getItem(form.getAttribute("data-draft")); } catch (e) { return; }
    if (!raw) { return; }
    var data = JSON.parse(raw);
    draftFields(form).forEach(function (el) {
      if (el.type === "radio" || el.type === "checkbox") {
        if (data[el.name + "=" + el.value]) { el.checked = true; }
      } else if (!el.value && typeof data[el.name] === "string") { el.value = data[el.name]; }
    });
  }
  function initDrafts(root) {
    root.querySelectorAll("form[data-draft]").forEach(function (form) {
      if (!form.getAttribute("data-draft") || form.dataset.draftReady) { return; }
      form.dataset.draftReady = "1";
      restoreDraft(form);
      form.addEventListener("input", function () { saveDraft(form); });
      form.addEventListener("change", function () { saveDraft(form); });
    });
  }

  // Validation metadata: show the fields for the chosen verdict.
  function syncVerdict(form) {
    var checked = form.querySelector("input[name=label]:checked");
    var label = checked ? checked.value : "";
    form.querySelectorAll("[data-when]").forEach(function (el) {
      el.classList.toggle("off", el.getAttribute("data-when") !== label);
    });
  }
  function initVerdicts(root) {
    root.querySelectorAll("form[data-verdict-form]").forEach(function (form) {
      syncVerdict(form);
      form.addEventListener("change", function () { syncVerdict(form); });
    });
  }

  // Weight sliders show their value next to their label.
  document.addEventListener("input", function (ev) {
    var out = ev.target.getAttribute && ev.target.getAttribute("data-output");
    var el = out && document.getElementById(out);
    if (el) { el.textContent = ev.target.value; }
  });

  document.addEventListener("submit", function (ev) {
    var msg = ev.target.getAttribute && ev.target.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) { ev.preventDefault(); }
  }, true);
  document.addEventListener("submit", function (ev) {
    if (ev.defaultPrevented || !ev.target.hasAttribute || !ev.target.hasAttribute("data-busy")) { return; }
    var button = ev.target.querySelector("button[type=submit]");
    if (button) { button.setAttribute("aria-busy", "true"); setTimeout(function () { button.disabled = true; }, 0); }
  });

  function init(root) { initDrafts(root); initVerdicts(root); }
  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:load", function (ev) { init(ev.target); });
  // The answer region takes focus so keyboard and screen-reader users land on the result.
  document.addEventListener("htmx:afterSwap", function (ev) {
    var verdict = document.getElementById("verdict");
    if (ev.target && ev.target.id === "result" && verdict) { verdict.setAttribute("tabindex", "-1"); }
  });
})();
