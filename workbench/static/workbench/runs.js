// The runs page, with JavaScript: one button ticks (or clears) every run on the page.
(function () {
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("tick-page");
    if (!button) return;
    var boxes = document.querySelectorAll("input[type=checkbox][name=runs]");
    button.hidden = boxes.length === 0;
    button.addEventListener("click", function () {
      var all = Array.prototype.every.call(boxes, function (box) { return box.checked; });
      boxes.forEach(function (box) { box.checked = !all; });
      button.textContent = all ? "Tick every run on this page" : "Clear the ticks on this page";
    });
  });
})();
