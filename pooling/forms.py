"""The console's pool form: every strategy and parameter ``manage.py build_pool`` has."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from pooling.models import Pool
from pooling.params import stratum, topic_depths
from pooling.strategies import registry
from pooling.strategies.cal import CalParams
from pooling.strategies.ranking import team_key


class PoolBuildForm(forms.Form):
    name = forms.SlugField(max_length=64, initial="main",
                           help_text="A new name builds a new pool; the name of an existing pool extends it (same "
                                     "strategy): only new documents are added.")
    strategy = forms.ChoiceField(choices=registry.form_choices, initial="depth")
    depth = forms.IntegerField(min_value=1, max_value=100000, required=False, initial=100,
                               help_text="k of depth-k pooling; the candidates' depth for the other strategies (default 100).")
    topic_depth = forms.CharField(required=False, max_length=20000, label="Per-topic depth",
                                  help_text="QID=K pairs separated by spaces, e.g. 301=50 302=100; other topics get the depth above.")
    budget = forms.IntegerField(min_value=1, max_value=10**9, required=False, help_text="Judgments per topic (fusion and adaptive strategies).")
    total_budget = forms.IntegerField(min_value=1, max_value=10**9, required=False, help_text="Judgments over all topics.")
    runs = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                     help_text="Pool only these runs (none ticked: every run offered to the pool).")
    runs_per_team = forms.IntegerField(min_value=1, max_value=10**6, required=False,
                                       help_text="Pool only each team's first N runs by their pool priority.")
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, required=False,
                              help_text="Seed of the shuffle and of sampling (empty: random, and recorded).")
    order = forms.ChoiceField(choices=Pool.Order.choices, initial=Pool.Order.SHUFFLED, label="Judging order")
    strata = forms.CharField(required=False, max_length=2000,
                             help_text="Sampled strategy: FIRST-LAST:RATE separated by spaces, e.g. 1-10:1 11-100:0.1")
    shared = forms.BooleanField(required=False, help_text="Bandits: credit a judgment to every run that retrieved the document.")
    cal = forms.CharField(required=False, max_length=500, label="Active learning parameters",
                          help_text="Continuous active learning (cal): KEY=VALUE separated by spaces, e.g. stop=target "
                                    "target_recall=0.8 seed_depth=10. Keys: " + ", ".join(CalParams.keys()) + ".")

    def __init__(self, *args, collection, **kwargs):
        super().__init__(*args, **kwargs)
        self.collection = collection
        self._runs = list(collection.runs.order_by("tag").values_list("tag", "team", "contributes", "pool_priority"))
        self.fields["runs"].choices = [(tag, tag) for tag, *_ in self._runs]

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

    def clean_strata(self):
        text = self.cleaned_data.get("strata", "").strip()
        try:
            return [stratum(part) for part in text.split()] if text else None
        except ValueError as exc:
            raise ValidationError(str(exc)) from None

    def clean_cal(self):
        text = self.cleaned_data.get("cal", "").strip()
        try:
            return CalParams.parse(text.split()).as_dict() if text else None
        except ValueError as exc:
            raise ValidationError(str(exc)) from None

    def clean(self):
        data = super().clean()
        pairs = (data.get("topic_depth") or "").split()
        if pairs and not self.errors:
            try:
                data["depth_value"] = topic_depths(data.get("depth"), pairs, self.collection)
            except ValueError as exc:
                self.add_error("topic_depth", str(exc).replace("--depth K", "a depth").replace("--topic-depth ", ""))
        else:
            data["depth_value"] = data.get("depth")
        return data

    def build_arguments(self, seed: int) -> dict:
        """Keyword arguments of ``pool_build`` (JSON-serialisable, so a job can carry them)."""
        data = self.cleaned_data
        return {"name": data["name"], "strategy": data["strategy"], "depth": data["depth_value"],
                "budget": data.get("budget"), "total_budget": data.get("total_budget"),
                "tags": list(data.get("runs") or []) or None, "runs_per_team": data.get("runs_per_team"),
                "seed": seed, "order": data["order"],
                "strata": [list(s) for s in data["strata"]] if data.get("strata") else None,
                "shared": bool(data.get("shared")), "cal": data.get("cal")}


def params_of(arguments: dict) -> registry.PoolParams:
    """The strategy's parameters from :meth:`PoolBuildForm.build_arguments`."""
    from pooling import strategies as S

    strata = [S.Stratum(*s) for s in arguments["strata"]] if arguments.get("strata") else None
    return registry.PoolParams(depth=arguments["depth"], budget=arguments["budget"],
                               total_budget=arguments["total_budget"], seed=arguments["seed"], strata=strata,
                               shared=arguments["shared"], runs_per_team=arguments["runs_per_team"])
