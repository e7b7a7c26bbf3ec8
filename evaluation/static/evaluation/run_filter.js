// The curves page's filter box narrows the list of run checkboxes as one types. Without JavaScript its
// Filter button asks the server for the runs whose names contain the text (the ticked runs stay ticked).
document.addEventListener("DOMContentLoaded", function () {
  const box = document.getElementById("find");
  if (!box) return;
  const labels = document.querySelectorAll("#run-list label[data-tag]");
  box.addEventListener("input", function () {
    const wanted = box.value.trim().toLowerCase();
    labels.forEach(function (label) { label.hidden = wanted !== "" && !label.dataset.tag.includes(wanted); });
  });
  box.addEventListener("keydown", function (event) {  // Enter filters here instead of sending the form
    if (event.key === "Enter") event.preventDefault();
  });
});
