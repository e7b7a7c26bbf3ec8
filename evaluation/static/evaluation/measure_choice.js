// The leaderboard's measure rows: a family that takes no parameters (map) hides its parameter input, one that
// does (ndcg_cut) shows it with the family's syntax as placeholder. Without JavaScript every input a family may
// need is shown; the server checks what is sent either way.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("#measure-choice .measure-row").forEach(function (row) {
    const select = row.querySelector("select[name=family]");
    const input = row.querySelector("input[name=param]");
    select.addEventListener("change", function () {
      const chosen = select.selectedOptions[0];
      const takes = !chosen || !chosen.value || chosen.dataset.params === "1";
      input.hidden = !takes;
      if (!takes) input.value = "";
      input.placeholder = (chosen && chosen.dataset.syntax) || "parameters, if any";
    });
  });
});
