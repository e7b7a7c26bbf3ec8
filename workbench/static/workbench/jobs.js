// A job's page follows its progress without reloading: the status card asks for its own fragment every
// second until the job has finished (without JavaScript, the page reloads itself instead).
(function () {
  function poll() {
    var card = document.getElementById("job-status");
    if (!card || !card.dataset.poll) return;
    fetch(card.dataset.poll, {credentials: "same-origin"})
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html) {
          card.outerHTML = html;
        }
        setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 3000); });
  }
  document.addEventListener("DOMContentLoaded", function () { setTimeout(poll, 1000); });
})();
