// Keyboard-first judging. The page works without this script (plain form posts); this adds
// one-key judging, going back, the shortcuts list, and the visible (not idle) time on the document.
(function () {
  "use strict";
  const form = document.getElementById("judge-form");
  if (!form) return;
  const IDLE_MS = 120000;  // no input for two minutes: the assessor is away, stop counting
  let visibleMs = 0, lastTick = performance.now(), lastInput = performance.now(), submitting = false;

  function tick() {
    const now = performance.now();
    const active = document.visibilityState === "visible" && now - lastInput < IDLE_MS;
    if (active) visibleMs += now - lastTick;
    lastTick = now;
  }
  setInterval(tick, 1000);
  document.addEventListener("visibilitychange", tick);
  ["mousemove", "keydown", "scroll", "wheel", "touchstart"].forEach(function (type) {
    window.addEventListener(type, function () { tick(); lastInput = performance.now(); }, { passive: true });
  });

  form.addEventListener("submit", function (event) {
    if (submitting) { event.preventDefault(); return; }  // a double press sends one judgment
    submitting = true;
    tick();
    document.getElementById("time_spent_ms").value = String(Math.round(visibleMs));
  });

  window.addEventListener("pageshow", function () { submitting = false; });  // back from the cache

  function press(key) {
    const button = form.querySelector('button[data-key="' + key + '"]');
    if (!button || submitting) return false;
    form.requestSubmit ? form.requestSubmit(button) : button.click();
    return true;
  }

  const help = document.getElementById("shortcuts");
  function toggleHelp(show) { help.hidden = show === undefined ? !help.hidden : !show; }

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

  const use = document.getElementById("use-selection");
  if (use) use.addEventListener("click", function () {
    const text = String(window.getSelection ? window.getSelection() : "").trim();
    if (text) document.getElementById("id_rationale").value = text;
  });
})();
