// On a phone the leaderboard's options fold under their summary so that the scores come first; the page
// sends them open (without JavaScript, or on a wider screen, they stay open).
document.addEventListener("DOMContentLoaded", function () {
  const options = document.getElementById("options");
  if (options && window.matchMedia("(max-width: 760px)").matches) options.open = false;
});
