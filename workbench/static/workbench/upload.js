// The upload forms, with JavaScript: the files chosen are counted (and too many refused) before anything
// is sent, the form is sent in the background with a progress bar showing the bytes sent, and then the
// browser goes to the job's page, which follows the import. Without JavaScript the forms post as usual.
(function () {
  function size(bytes) {
    if (bytes >= 1e9) return (bytes / 1e9).toFixed(2) + " GB";
    if (bytes >= 1e6) return (bytes / 1e6).toFixed(1) + " MB";
    if (bytes >= 1e3) return (bytes / 1e3).toFixed(0) + " kB";
    return bytes + " bytes";
  }

  function chosen(form) {
    var count = 0, bytes = 0;
    form.querySelectorAll("input[type=file]").forEach(function (input) {
      for (var i = 0; i < input.files.length; i++) { count += 1; bytes += input.files[i].size; }
    });
    return {count: count, bytes: bytes};
  }

  function setup(form) {
    var max = parseInt(form.dataset.maxFiles, 10) || 0;
    var note = form.querySelector(".file-count");
    var sending = form.querySelector(".sending");
    var bar = sending && sending.querySelector("progress");
    var text = sending && sending.querySelector("[aria-live]");
    var button = form.querySelector("button[type=submit]");
    var files = form.querySelector("input[type=file][multiple], input[type=file]");

    function check() {
      var got = chosen(form);
      var over = max && got.count > max;
      if (note) {
        note.textContent = got.count ? got.count + " file" + (got.count === 1 ? "" : "s") + " chosen, " + size(got.bytes)
          + (over ? ": more than the " + max + " files one upload may carry. Upload them in parts, or as one archive." : ".") : "";
        note.classList.toggle("form-error", !!over);
        note.setAttribute("role", over ? "alert" : "status");
      }
      if (files) files.setCustomValidity(over ? "At most " + max + " files in one upload." : "");
      return !over;
    }

    form.querySelectorAll("input[type=file]").forEach(function (input) { input.addEventListener("change", check); });
    form.addEventListener("submit", function (event) {
      if (!check()) { event.preventDefault(); if (files) files.reportValidity(); return; }
      if (!window.FormData || !sending || !bar) return;  // an old browser: the form posts as usual
      event.preventDefault();
      var total = chosen(form).bytes;
      var xhr = new XMLHttpRequest();
      sending.hidden = false;
      button.disabled = true;
      bar.value = 0;
      text.textContent = "0 of " + size(total) + " sent";
      xhr.upload.addEventListener("progress", function (e) {
        if (!e.lengthComputable) return;
        bar.max = e.total;
        bar.value = e.loaded;
        text.textContent = size(e.loaded) + " of " + size(e.total) + " sent (" + Math.floor(100 * e.loaded / e.total) + "%)";
      });
      xhr.upload.addEventListener("load", function () {
        bar.value = bar.max;
        text.textContent = "All " + size(total) + " sent; starting the import…";
      });
      xhr.addEventListener("load", function () {
        var here = location.href.split("#")[0];
        if (xhr.status < 400 && xhr.responseURL && xhr.responseURL.split("#")[0] !== here) {
          location.assign(xhr.responseURL);  // the job's page, which follows the import
          return;
        }
        // refused (the form's errors, or the limits): show the answer in place of this page
        var page = new DOMParser().parseFromString(xhr.responseText, "text/html");
        document.title = page.title;
        document.body.replaceWith(document.adoptNode(page.body));
        document.querySelectorAll("form.upload").forEach(setup);
        var alert = document.querySelector("[role=alert]");
        if (alert) { alert.setAttribute("tabindex", "-1"); alert.focus(); }
      });
      xhr.addEventListener("error", function () {
        button.disabled = false;
        text.textContent = "The upload was interrupted (the connection was lost). Nothing was kept; please try again.";
        text.setAttribute("role", "alert");
      });
      xhr.open("POST", form.getAttribute("action") || location.href.split("#")[0]);
      xhr.send(new FormData(form));
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form.upload").forEach(setup);
  });
})();
