"""The console's pool form: every strategy and parameter ``manage.py build_pool`` has, generated from the
strategies' declarations (:mod:`pooling.strategies.declaration`): one typed field per parameter, grouped
under the strategies that read it; only the chosen strategy's fields are validated and used."""

from __future__ import annotations

from django import forms

from pooling.models import Pool
from pooling.params import topic_depths
from pooling.strategies import registry
from pooling.strategies.declaration import Param
from pooling.strategies.ranking import team_key
from workbench.console.param_fields import param_field


class PoolBuildForm(forms.Form):
    name = forms.SlugField(max_length=64, initial="main",
                           help_text="A new name builds a new pool; the name of an existing pool extends it (same "
                                     "strategy): only new documents are added.")
    strategy = forms.ChoiceField(choices=registry.form_choices, initial=registry.names()[0])
    runs = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                     help_text="Pool only these runs (none ticked: every run offered to the pool).")
    runs_per_team = forms.IntegerField(min_value=1, max_value=10**6, required=False,
                                       help_text="Pool only each team's first N runs by their pool priority.")
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, required=False,
                              help_text="Seed of the shuffle and of sampling (empty: random, and recorded).")
    order = forms.ChoiceField(choices=Pool.Order.choices, initial=Pool.Order.SHUFFLED, label="Judging order")

    def __init__(self, *args, collection, **kwargs):
        super().__init__(*args, **kwargs)
        self.collection = collection
        self._runs = list(collection.runs.order_by("tag").values_list("tag", "team", "contributes", "pool_priority"))
        self.fields["runs"].choices = [(tag, tag) for tag, *_ in self._runs]
        #: parameter field name -> the strategies that read it (the declared ones, then the KEY=VALUE fields)
        self.param_users: dict[str, list[str]] = {}
        for p, users in registry.parameters():
            self.fields[p.name] = param_field(p)
            self.param_users[p.name] = users
        self.gathered = {into: kind for into, kind, _ in registry.gathered()}
        for into, _, users in registry.gathered():  # cal's parameters also as KEY=VALUE words
            self.fields[into] = forms.CharField(
                required=False, max_length=2000, label=f"{registry.get(users[0]).label} parameters",
                help_text="More parameters as KEY=VALUE separated by spaces, taking precedence over the fields "
                          "above, e.g. stop=target target_recall=0.8.")
            self.param_users[into] = users

    def param_groups(self) -> list[dict]:
        """The parameter fields grouped by the strategies that read them, each group under their labels:
        {"strategies": "depth rrf ...", "labels": [...], "fields": [bound fields]} (the page shows only the
        chosen strategy's groups; without JavaScript every group shows under its heading)."""
        labels = {s.name: s.label for s in registry.STRATEGIES.values()}
        groups: dict[tuple[str, ...], dict] = {}
        for name, users in self.param_users.items():
            group = groups.setdefault(tuple(users), {"strategies": " ".join(users),
                                                     "labels": [labels[u] for u in users], "fields": []})
            group["fields"].append(self[name])
        return list(groups.values())

    def run_groups(self) -> list[dict]:
        """The run checkboxes by team (as runs-per-team pooling groups them), each team's runs by priority:
        {"team", "key", "runs": [{"tag", "priority", "offered", "widget"}]}; runs without a team last."""
        widgets = {w.data["value"]: w for w in self["runs"]}
        groups: dict[tuple[str, str], dict] = {}
        for tag, team, offered, priority in self._runs:
            key = team_key(team, tag)
            key = ("~", "") if key[0] == "run" else key
            group = groups.setdefault(key, {"team": team.strip() or "no team", "key": key[1] or "-", "runs": []})
            group["runs"].append({"tag": tag, "priority": priority, "offered": offered, "widget": widgets.get(tag)})
        for group in groups.values():
            group["runs"].sort(key=lambda r: (r["priority"], r["tag"]))
        return [groups[k] for k in sorted(groups)]

    def selection(self, action: str, ticked: list[str]) -> list[str]:
        """The runs ticked after a "select" button (which works without JavaScript): ``all``, ``none``,
        ``offered`` (the runs offered to the pool), or ``team:KEY`` (add that team's runs)."""
        if action == "all":
            return [tag for tag, *_ in self._runs]
        if action == "none":
            return []
        if action == "offered":
            return [tag for tag, _, offered, _ in self._runs if offered]
        if action.startswith("team:"):
            wanted = action.removeprefix("team:")
            team_runs = [tag for tag, team, *_ in self._runs
                         if (team_key(team, tag)[1] if team_key(team, tag)[0] == "team" else "-") == wanted]
            return [tag for tag, *_ in self._runs if tag in set(ticked) | set(team_runs)]
        return ticked

    def clean(self):
        """Only the chosen strategy's parameters: the others' values and errors are dropped; each value is
        checked against its declaration (one line naming the field, the bound and the value)."""
        data = super().clean()
        chosen = registry.STRATEGIES.get(data.get("strategy"))
        for name, users in self.param_users.items():
            if chosen is None or chosen.name not in users:
                self._errors.pop(name, None)
                data.pop(name, None)
        for p in chosen.params if chosen else ():
            self._clean_param(p, data)
        for into in self.gathered:
            if chosen is not None and chosen.name in self.param_users[into]:
                self._gather(chosen, into, data)
        self._depths(data)
        return data

    def _clean_param(self, p: Param, data: dict) -> None:
        value = data.get(p.name)
        if p.parse is not None and isinstance(value, str):
            try:
                value = data[p.name] = p.read(value) if value.strip() else None
            except ValueError as exc:
                self.add_error(p.name, str(exc))
                return
        if p.type == "choice" and value == "":
            value = data[p.name] = None
        problem = p.problem(value, p.name)
        if problem:
            self.add_error(p.name, problem)

    def _gather(self, chosen: registry.Strategy, into: str, data: dict) -> None:
        """The chosen strategy's parameters that build one object (cal's): the fields', then the KEY=VALUE
        words', checked once by the object itself."""
        given = {p.name: data[p.name] for p in chosen.params if p.into == into and data.get(p.name) is not None}
        words = (data.get(into) or "").split()
        kind = self.gathered[into]
        try:
            typed = kind.parse(words)  # refuses an unknown key or a value out of bounds, naming it
            given.update({k: getattr(typed, k) for k in {w.partition("=")[0].strip().replace("-", "_") for w in words}})
            data[into] = kind(**given).as_dict()
        except (TypeError, ValueError) as exc:
            self.add_error(into if words else None, str(exc))

    def _depths(self, data: dict) -> None:
        pairs = (data.get("topic_depth") or "").split()
        if pairs and not self.errors:
            try:
                data["depth_value"] = topic_depths(data.get("depth"), pairs, self.collection)
            except ValueError as exc:
                self.add_error("topic_depth", str(exc).replace("--depth K", "a depth").replace("--topic-depth ", ""))
        else:
            data["depth_value"] = data.get("depth")

    def build_arguments(self, seed: int) -> dict:
        """Keyword arguments of ``pool_build`` (JSON-serialisable, so a job can carry them): the common
        ones, and the chosen strategy's parameters (those of another strategy stay at their "not given")."""
        data = self.cleaned_data
        chosen = registry.get(data["strategy"])
        arguments = {"name": data["name"], "strategy": chosen.name, "depth": None, "budget": None,
                     "total_budget": None, "tags": list(data.get("runs") or []) or None,
                     "runs_per_team": data.get("runs_per_team"), "seed": seed, "order": data["order"],
                     "strata": None, "shared": False, "cal": None}
        for p in chosen.params:
            if p.into is None and p.name != "topic_depth":
                value = data.get(p.name)
                target = arguments if p.name in arguments else arguments.setdefault("options", {})
                target[p.name] = bool(value) if p.type == "bool" else value
        for into in self.gathered:
            if into in data and chosen.name in self.param_users[into]:
                arguments[into] = data[into]
        if chosen.param("depth") is not None:
            arguments["depth"] = data.get("depth_value")
        if arguments["strata"]:
            arguments["strata"] = [list(s) for s in arguments["strata"]]
        return arguments


def params_of(arguments: dict) -> registry.PoolParams:
    """The strategy's parameters from :meth:`PoolBuildForm.build_arguments` (cal's too: the preview
    shows what the build will use)."""
    from pooling import strategies as S

    strata = [S.Stratum(*s) for s in arguments["strata"]] if arguments.get("strata") else None
    return registry.PoolParams(depth=arguments["depth"], budget=arguments["budget"],
                               total_budget=arguments["total_budget"], seed=arguments["seed"], strata=strata,
                               shared=arguments["shared"], runs_per_team=arguments["runs_per_team"],
                               options=arguments.get("options"),
                               **{into: kind(**arguments[into]) for into, kind, _ in registry.gathered()
                                  if arguments.get(into)})
