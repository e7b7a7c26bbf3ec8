// The machine-judge form: only the chosen judge's fields (its endpoint and model, its declared options) are shown;
// the other groups are hidden and disabled, so not posted. Without JavaScript every group shows under the
// labels of the judges that read it, and the server ignores the fields the chosen judge does not read.
(function () {
  "use strict";
  function ready(fn) {
    if (document.readyState !== "loading") fn(); else document.addEventListener("DOMContentLoaded", fn);
  }
  ready(function () {
    var form = document.getElementById("machine-judge-form");
    var kind = form && form.querySelector("select[name=kind]");
    if (!kind) return;
    function show() {
      Array.prototype.forEach.call(form.querySelectorAll("fieldset.judge-options"), function (group) {
        var used = group.getAttribute("data-judges").split(" ").indexOf(kind.value) !== -1;
        group.hidden = !used;
        group.disabled = !used;
      });
    }
    kind.addEventListener("change", show);
    show();
  });
})();
