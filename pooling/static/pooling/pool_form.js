// The pool form: only the chosen strategy's parameters shown (without JavaScript every group shows under its
// strategies' heading); the run list's filter by team or run, and the tick buttons (all / none / offered / a
// team) done in place. Without JavaScript the same buttons post the form and the page comes back ticked.
(function () {
  "use strict";
  function ready(fn) {
    if (document.readyState !== "loading") fn(); else document.addEventListener("DOMContentLoaded", fn);
  }
  ready(function () {
    var form = document.getElementById("pool-form");
    if (!form) return;
    // only the chosen strategy's parameters: the other groups hidden and disabled (not posted)
    var strategy = form.querySelector("select[name=strategy]");
    function showParams() {
      if (!strategy) return;
      Array.prototype.forEach.call(form.querySelectorAll("fieldset.strategy-params"), function (group) {
        var used = group.getAttribute("data-strategies").split(" ").indexOf(strategy.value) !== -1;
        group.hidden = !used;
        group.disabled = !used;
      });
    }
    if (strategy) { strategy.addEventListener("change", showParams); showParams(); }
    var filter = document.getElementById("run-filter");
    var boxes = function (root) { return Array.prototype.slice.call((root || form).querySelectorAll("input[name=runs]")); };
    var visible = function (box) { var li = box.closest("li"); return !li.hidden && !li.closest(".team").hidden; };
    var legend = form.querySelector("#runs legend");
    function count() {
      if (!legend) return;
      var all = boxes(), ticked = all.filter(function (b) { return b.checked; }).length;
      legend.textContent = "Runs (" + all.length + (ticked ? ", " + ticked + " ticked" : "") + ")";
    }
    form.addEventListener("change", function (e) { if (e.target.name === "runs") count(); });
    form.addEventListener("click", function (e) {
      var button = e.target.closest("button[data-select]");
      if (!button) return;
      e.preventDefault();
      var kind = button.getAttribute("data-select");
      if (kind === "team") {
        boxes(button.closest(".team")).forEach(function (b) { if (visible(b)) b.checked = true; });
      } else {
        boxes().forEach(function (b) {
          if (!visible(b)) return;
          if (kind === "all") b.checked = true;
          else if (kind === "none") b.checked = false;
          else if (kind === "offered") b.checked = b.closest("li").getAttribute("data-offered") === "1";
        });
      }
      count();
    });
    if (filter) {
      filter.hidden = false;
      filter.addEventListener("input", function () {
        var q = filter.value.trim().toLowerCase();
        Array.prototype.forEach.call(form.querySelectorAll(".team"), function (team) {
          var teamMatch = !q || team.getAttribute("data-team").indexOf(q) !== -1;
          var any = false;
          Array.prototype.forEach.call(team.querySelectorAll("li"), function (li) {
            var show = teamMatch || li.getAttribute("data-run").indexOf(q) !== -1;
            li.hidden = !show;
            any = any || show;
          });
          team.hidden = !any;
        });
      });
      // Enter in the filter must not submit the form
      filter.addEventListener("keydown", function (e) { if (e.key === "Enter") e.preventDefault(); });
    }
  });
})();
