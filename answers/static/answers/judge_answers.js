// Answers' judging pages: keys 1/2/3 press the matching choice, and the visible (not idle) time on the page
// goes with the post. The pages work without this script (plain form posts and redirects).
(function () {
  "use strict";
  const IDLE_MS = 120000;
  let visibleMs = 0, lastTick = performance.now(), lastInput = performance.now(), sent = false;
  function tick() {
    const now = performance.now();
    if (document.visibilityState === "visible" && now - lastInput < IDLE_MS) visibleMs += now - lastTick;
    lastTick = now;
  }
  setInterval(tick, 1000);
  ["mousemove", "keydown", "scroll", "touchstart"].forEach(function (type) {
    window.addEventListener(type, function () { tick(); lastInput = performance.now(); }, { passive: true });
  });
  document.addEventListener("submit", function (event) {
    if (sent) { event.preventDefault(); return; }  // one post per choice: a double press records once
    sent = true;
    tick();
    const spent = document.getElementById("time_spent_ms");
    if (spent) spent.value = String(Math.round(visibleMs));
  });
  window.addEventListener("pageshow", function () { sent = false; });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable)) return;
    const button = document.querySelector('#judge-form button[data-key="' + event.key + '"]');
    if (button) { event.preventDefault(); button.click(); }
  });
})();
