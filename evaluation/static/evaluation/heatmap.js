// The significance heatmap names the pair under the pointer (row run, column run and what the cell's colour
// means, read from the legend) in the line under the picture. Without JavaScript the table has the numbers.
// The tables of numbers are a page of their own (a link without JavaScript): opening "The numbers" loads them
// into this page, once.
document.addEventListener("DOMContentLoaded", function () {
  const numbers = document.getElementById("numbers"), holder = document.getElementById("numbers-tables");
  if (numbers && holder && holder.dataset.src) {
    const load = function () {
      if (!numbers.open || holder.dataset.loading) return;
      holder.dataset.loading = "yes";
      fetch(holder.dataset.src, {credentials: "same-origin"}).then(function (response) {
        if (!response.ok) throw new Error(response.statusText);
        return response.text();
      }).then(function (text) {
        const found = new DOMParser().parseFromString(text, "text/html").getElementById("numbers-tables");
        if (found) holder.innerHTML = found.innerHTML;
      }).catch(function () { delete holder.dataset.loading; });
    };
    numbers.addEventListener("toggle", load);
    load();
  }
});
document.addEventListener("DOMContentLoaded", function () {
  const svg = document.querySelector("svg.heatmap");
  const out = document.getElementById("heatmap-pair");
  if (!svg || !out) return;
  const runs = Array.from(svg.querySelectorAll("text.row"), function (t) { return t.textContent; });
  const meaning = {};
  document.querySelectorAll(".heatmap-card .legend li").forEach(function (li) {
    meaning[li.dataset.fill] = li.textContent.trim();
  });
  const cells = svg.querySelector("image.cells"), canvas = document.createElement("canvas");
  const picture = new Image();
  picture.onload = function () {
    canvas.width = picture.width; canvas.height = picture.height;
    canvas.getContext("2d").drawImage(picture, 0, 0);
  };
  picture.src = cells.getAttribute("href");
  svg.addEventListener("mousemove", function (event) {
    const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
    const i = Math.floor(point.y), j = Math.floor(point.x);
    if (i < 0 || j < 0 || i >= runs.length || j >= runs.length || !canvas.width) { out.textContent = ""; return; }
    const rgb = canvas.getContext("2d").getImageData(j, i, 1, 1).data;
    const hex = "#" + [0, 1, 2].map(function (c) { return rgb[c].toString(16).padStart(2, "0"); }).join("");
    out.textContent = i === j ? runs[i] : runs[i] + " against " + runs[j] + ": " + (meaning[hex] || "");
  });
});
