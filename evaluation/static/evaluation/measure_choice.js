// The leaderboard's measure rows: a family that takes no parameters (map) hides its parameter input, one that
// does (ndcg_cut) shows it with the family's syntax as placeholder (from the page's #measure-syntax, generated
// from the declarations). Without JavaScript every input a family may need is shown; the server checks what is
// sent either way.
document.addEventListener("DOMContentLoaded", function () {
  const data = document.getElementById("measure-syntax");
  const syntax = data ? JSON.parse(data.textContent) : {};
  document.querySelectorAll("#measure-choice .measure-row").forEach(function (row) {
    const select = row.querySelector("select[name=family]");
    const input = row.querySelector("input[name=param]");
    select.addEventListener("change", function () {
      const said = syntax[select.value];
      const takes = !select.value || said === undefined || said !== "";
      input.hidden = !takes;
      if (!takes) input.value = "";
      input.placeholder = said || "parameters, if any";
    });
  });
});
