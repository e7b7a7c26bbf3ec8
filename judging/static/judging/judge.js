// Keyboard-first judging. The page works without this script (plain form posts and redirects);
// this adds one-key judging, going back, the shortcuts list, the visible (not idle) time on the
// document, and an in-place swap to the next document once the server has stored the judgment.
(function () {
  "use strict";
  const IDLE_MS = 120000;  // no input for two minutes: the assessor is away, stop counting
  let visibleMs = 0, lastTick = performance.now(), lastInput = performance.now(), submitting = false;

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
  // A polite live region outside <main>, so that screen readers hear which document came next.
  function announce(text) {
    let region = document.getElementById("judge-announce");
    if (!region) {
      region = document.createElement("div");
      region.id = "judge-announce";
      region.setAttribute("aria-live", "polite");
      region.setAttribute("style", "position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)");
      document.body.appendChild(region);
    }
    region.textContent = text;
  }

  function swapIn(html, url, push) {
    const doc = new DOMParser().parseFromString(html, "text/html");
    const main = doc.querySelector("main");
    // anything but another judging page (the topic boundary, the end of the queue) is loaded whole,
    // with its own styles
    if (!main || !doc.getElementById("judge-form")) { window.location.href = url; return; }
    document.querySelector("main").replaceWith(main);
    document.title = doc.title;
    if (push && url !== window.location.href) history.pushState({ judge: true }, "", url);
    toDocumentStart();
    resetForNewDocument();
    bindSelectionButton();
    enhance();
    const label = document.getElementById("doc-label");
    if (label) announce("Next: " + label.textContent);
  }

  // The next document starts where the last one started: when the assessor had scrolled into the
  // document, the window goes back to the document's start (not to the page's top, where the topic is);
  // the grade bar stays where it is.
  function toDocumentStart() {
    const doc = document.querySelector("section.doc");
    if (!doc) return;
    const top = doc.getBoundingClientRect().top;
    if (top < 0) window.scrollTo(0, Math.max(0, window.scrollY + top - 8));
  }

  // What only works with this script: the dialog buttons; touch hints; room under the document for a grade
  // bar fixed to the bottom of a phone's screen.
  function barHeight() {
    const bar = document.querySelector(".judge-bar");
    const fixed = bar && getComputedStyle(bar).position === "fixed";
    document.documentElement.style.setProperty("--judge-bar-height", fixed ? (bar.offsetHeight + 16) + "px" : "0px");
  }
  function enhance() {
    document.querySelectorAll("[data-needs-script]").forEach(function (el) { el.hidden = false; });
    barHeight();
    // judging by link: the grades of a document without text unlock once its page has been opened
    const link = document.querySelector(".open-link");
    const waiting = document.querySelectorAll("button[data-after-link]");
    if (!link || !waiting.length) return;
    waiting.forEach(function (b) { b.disabled = true; });
    const unlock = function () { waiting.forEach(function (b) { b.disabled = false; }); };
    ["pointerdown", "click", "auxclick", "contextmenu"].forEach(function (type) { link.addEventListener(type, unlock); });
    link.addEventListener("keydown", function (event) { if (event.key === "Enter") unlock(); });
  }
  function markTouch() { document.body.classList.add("touch"); }
  if (window.matchMedia && window.matchMedia("(pointer: coarse)").matches) markTouch();
  window.addEventListener("touchstart", markTouch, { passive: true, once: true });
  window.addEventListener("resize", barHeight);
  document.addEventListener("click", function (event) {
    const target = event.target.closest ? event.target.closest("[data-dialog], [data-close-dialog], [data-toggle-highlight]") : null;
    if (!target) return;
    if (target.dataset.dialog) toggleDialog(target.dataset.dialog, true);
    else if (target.dataset.closeDialog) toggleDialog(target.dataset.closeDialog, false);
    else togglePlain();
  });

  async function submitVia(button) {
    const f = form();
    if (!f || submitting) return;
    submitting = true;
    tick();
    document.getElementById("time_spent_ms").value = String(Math.round(visibleMs));
    const body = new FormData(f);
    if (button && button.name) body.append(button.name, button.value);
    f.querySelectorAll("button[type=submit]").forEach(function (b) { b.disabled = true; });
    let response, html;
    try {
      response = await fetch(f.action, { method: "POST", body: body, credentials: "same-origin",
                                         headers: { "X-Judge-Swap": "1" } });
      html = await response.text();
    } catch (error) {
      notSaved(f, button, "the connection to the server failed");
      return;
    }
    // a server error without the judging page (the "database busy" page, a proxy's): nothing was stored
    if (response.status >= 500 && !/id="judge-form"/.test(html)) {
      notSaved(f, button, response.status === 503 ? "the server is busy (HTTP 503); try again in a moment"
                                                  : "the server could not store it (HTTP " + response.status + ")");
      return;
    }
    const url = response.headers.get("X-Judge-Url") || response.url;
    // the judgment is stored (or refused with a message, kept on the same document) before anything else is shown
    swapIn(html, new URL(url, window.location.href).href, response.ok);
    if (keyAt !== null) { document.body.dataset.lastSwapMs = String(Math.round(performance.now() - keyAt)); }
  }

  // A post that did not reach the database: stay on the document, say so, keep the choice marked, offer a retry.
  function notSaved(f, button, reason) {
    submitting = false;
    f.querySelectorAll("button[type=submit]").forEach(function (b) {
      b.disabled = b.hasAttribute("data-locked");
      b.classList.remove("pending");
    });
    if (button) button.classList.add("pending");
    let alert = document.getElementById("save-error");
    if (!alert) {
      alert = document.createElement("div");
      alert.id = "save-error";
      alert.className = "form-error";
      alert.setAttribute("role", "alert");
      f.querySelector(".judge-bar").prepend(alert);
    }
    const label = button ? Array.from(button.childNodes).filter(function (n) { return n.nodeName !== "KBD"; })
      .map(function (n) { return n.textContent; }).join("").trim() : "your judgment";
    alert.textContent = "Not saved: " + reason + ". Your choice (" + label + ") is kept: ";
    const retry = document.createElement("button");
    retry.type = "button";
    retry.textContent = "Retry";
    retry.addEventListener("click", function () { submitVia(button); });
    alert.appendChild(retry);
    retry.focus();
  }

  document.addEventListener("submit", function (event) {
    if (event.target.id !== "judge-form" || !window.fetch || !window.DOMParser) return;
    event.preventDefault();
    submitVia(event.submitter);
  });

  let keyAt = null;  // when the last grade key went down: the page records keypress-to-next-document time

  function press(key) {
    keyAt = performance.now();
    const f = form();
    const button = f && f.querySelector('button[data-key="' + key + '"]');
    if (!button || button.disabled || submitting) return false;
    submitVia(button);
    return true;
  }

  // The shortcuts list and the guidelines are dialogs: while one is open it has the focus and the grade
  // keys do nothing (Esc, or its own key, closes it and gives the focus back).
  let returnFocus = null;
  function openDialog() { return document.querySelector("#shortcuts:not([hidden]), #guidelines:not([hidden])"); }
  function toggleDialog(id, show) {
    const box = document.getElementById(id);
    if (!box) return;
    const open = show === undefined ? box.hidden : show;
    if (open) {
      const other = openDialog();
      if (other && other !== box) other.hidden = true;
      returnFocus = document.activeElement;
      box.hidden = false;
      box.focus();
    } else if (!box.hidden) {
      box.hidden = true;
      if (returnFocus && returnFocus.focus) returnFocus.focus();
    }
  }
  function toggleHelp(show) { toggleDialog("shortcuts", show); }
  function togglePlain() {
    document.body.classList.toggle("plain");
    try { localStorage.setItem("judge-plain", document.body.classList.contains("plain") ? "1" : ""); } catch (e) { /* private mode */ }
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    const typing = target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.isContentEditable);
    if (event.key === "Escape") { toggleHelp(false); toggleDialog("guidelines", false); if (typing) target.blur(); return; }
    if (typing) return;
    if (event.key === "?") { toggleHelp(); event.preventDefault(); return; }
    if (event.key === "g") { toggleDialog("guidelines"); event.preventDefault(); return; }
    if (openDialog()) return;  // keys are inert under a dialog
    if (event.key === "p") { if (markSelection()) event.preventDefault(); return; }
    if (event.key === "h") { togglePlain(); event.preventDefault(); return; }
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

  // Supporting passages: the selected text's [start, end) character offsets in the document's text, kept
  // in the form (saved with the judgment) and shown marked in the document.
  function docText() { return document.getElementById("doc-text"); }
  function passages() {
    try { return JSON.parse(document.getElementById("id_passages").value || "[]"); } catch (e) { return []; }
  }
  function unwrap(root) {
    root.querySelectorAll("mark.passage").forEach(function (m) {
      m.replaceWith.apply(m, Array.from(m.childNodes));
    });
    root.normalize();
  }
  function showPassages() {
    const root = docText();
    const input = document.getElementById("id_passages");
    if (!root || !input) return;
    unwrap(root);
    const ranges = passages();
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    let at = 0;
    while (walker.nextNode()) { nodes.push([walker.currentNode, at]); at += walker.currentNode.data.length; }
    nodes.forEach(function (pair) {
      const node = pair[0], start = pair[1], end = start + node.data.length;
      ranges.forEach(function (r) {
        const from = Math.max(r[0], start), to = Math.min(r[1], end);
        if (from >= to || !node.parentNode) return;
        const range = document.createRange();
        range.setStart(node, from - start);
        range.setEnd(node, to - start);
        const mark = document.createElement("mark");
        mark.className = "passage";
        range.surroundContents(mark);
      });
    });
    const count = document.getElementById("passage-count");
    if (count) count.textContent = ranges.length ? ranges.length + " passage" + (ranges.length > 1 ? "s" : "") + " marked" : "";
  }
  function markSelection() {
    const root = docText();
    const selection = window.getSelection ? window.getSelection() : null;
    if (!root || !selection || selection.rangeCount === 0 || selection.isCollapsed) return false;
    const range = selection.getRangeAt(0);
    if (!root.contains(range.startContainer) || !root.contains(range.endContainer)) return false;
    const before = document.createRange();
    before.setStart(root, 0);
    before.setEnd(range.startContainer, range.startOffset);
    const start = before.toString().length, end = start + range.toString().length;
    if (end <= start) return false;
    const ranges = passages();
    ranges.push([start, end]);
    document.getElementById("id_passages").value = JSON.stringify(ranges);
    selection.removeAllRanges();
    showPassages();
    return true;
  }
  function bindSelectionButton() {
    const use = document.getElementById("use-selection");
    if (use) use.addEventListener("click", markSelection);
    const clear = document.getElementById("clear-passages");
    if (clear) clear.addEventListener("click", function () {
      document.getElementById("id_passages").value = "[]";
      showPassages();
    });
    showPassages();
  }
  bindSelectionButton();
  enhance();
  try { if (localStorage.getItem("judge-plain")) document.body.classList.add("plain"); } catch (e) { /* private mode */ }
})();
