// Keyboard-first judging. The page works without this script (plain form posts and redirects);
// this adds one-key judging, going back, the shortcuts list, the visible (not idle) time on the
// document, and an in-place swap to the next document once the server has stored the judgment.
(function () {
  "use strict";
  const IDLE_MS = 120000;  // no input for two minutes: the assessor is away, stop counting
  let visibleMs = 0, lastTick = performance.now(), lastInput = performance.now(), submitting = false;
  let nativeFallback = false;

  function form() { return document.getElementById("judge-form"); }

  function tick() {
    const now = performance.now();
    if (document.visibilityState === "visible" && now - lastInput < IDLE_MS) visibleMs += now - lastTick;
    lastTick = now;
  }
  setInterval(tick, 1000);
  document.addEventListener("visibilitychange", tick);
  ["mousemove", "keydown", "scroll", "wheel", "touchstart"].forEach(function (type) {
    window.addEventListener(type, function () { tick(); lastInput = performance.now(); }, { passive: true });
  });

  function resetForNewDocument() {
    visibleMs = 0; lastTick = performance.now(); lastInput = performance.now(); submitting = false;
  }

  // Replace the page's <main> (and title) with the one of an HTML response, as if navigated.
  function swapIn(html, url, push) {
    const doc = new DOMParser().parseFromString(html, "text/html");
    const main = doc.querySelector("main");
    if (!main) { window.location.href = url; return; }
    document.querySelector("main").replaceWith(main);
    document.title = doc.title;
    if (push && url !== window.location.href) history.pushState({ judge: true }, "", url);
    window.scrollTo(0, 0);
    resetForNewDocument();
    bindSelectionButton();
  }

  async function submitVia(button) {
    const f = form();
    if (!f || submitting) return;
    submitting = true;
    tick();
    document.getElementById("time_spent_ms").value = String(Math.round(visibleMs));
    const body = new FormData(f);
    if (button && button.name) body.append(button.name, button.value);
    f.querySelectorAll("button[type=submit]").forEach(function (b) { b.disabled = true; });
    try {
      const response = await fetch(f.action, { method: "POST", body: body, credentials: "same-origin",
                                               headers: { "X-Judge-Swap": "1" } });
      const html = await response.text();
      const url = response.headers.get("X-Judge-Url") || response.url;
      // the judgment is stored (or refused with a message) before anything else is shown
      swapIn(html, new URL(url, window.location.href).href, response.ok);
      if (keyAt !== null) { document.body.dataset.lastSwapMs = String(Math.round(performance.now() - keyAt)); }
    } catch (error) {
      // network trouble: fall back to an ordinary post, which the browser retries visibly
      submitting = false;
      nativeFallback = true;
      f.querySelectorAll("button[type=submit]").forEach(function (b) { b.disabled = false; });
      if (button) f.requestSubmit(button); else f.submit();
    }
  }

  document.addEventListener("submit", function (event) {
    if (event.target.id !== "judge-form" || nativeFallback || !window.fetch || !window.DOMParser) return;
    event.preventDefault();
    submitVia(event.submitter);
  });

  let keyAt = null;  // when the last grade key went down: the page records keypress-to-next-document time

  function press(key) {
    keyAt = performance.now();
    const f = form();
    const button = f && f.querySelector('button[data-key="' + key + '"]');
    if (!button || submitting) return false;
    submitVia(button);
    return true;
  }

  function toggleHelp(show) {
    const help = document.getElementById("shortcuts");
    if (help) help.hidden = show === undefined ? !help.hidden : !show;
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    const typing = target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.isContentEditable);
    if (event.key === "Escape") { toggleHelp(false); if (typing) target.blur(); return; }
    if (typing) return;
    if (event.key === "?") { toggleHelp(); event.preventDefault(); return; }
    if (event.key === "ArrowLeft" || event.key === "Backspace") {
      const prev = document.getElementById("prev-link");
      if (prev) { event.preventDefault(); window.location.href = prev.href; }
      return;
    }
    if (press(event.key.toLowerCase())) event.preventDefault();
  });

  // Back/forward after in-place swaps: show the page of that address.
  window.addEventListener("popstate", function () { window.location.reload(); });
  window.addEventListener("pageshow", function () { submitting = false; });

  function bindSelectionButton() {
    const use = document.getElementById("use-selection");
    if (use) use.addEventListener("click", function () {
      const text = String(window.getSelection ? window.getSelection() : "").trim();
      if (text) document.getElementById("id_rationale").value = text;
    });
  }
  bindSelectionButton();
})();
