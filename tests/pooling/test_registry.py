"""One registry of pooling strategies: the service, the command, the model and judging all read it."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pooling.models import Pool
from pooling.strategies import registry

ROOT = Path(__file__).resolve().parents[2]


def test_the_pool_model_offers_exactly_the_registered_strategies_and_imported_pools():
    field = Pool._meta.get_field("strategy")
    assert list(field.choices) == [(s.name, s.label) for s in registry.STRATEGIES.values()] + [("imported", "Imported")]


def test_the_adaptive_strategies_are_the_ones_that_grow_with_judgments():
    assert registry.adaptive_names() == ["mtf", "maxmean", "bandit", "cal"]
    assert not registry.is_adaptive("depth") and not registry.is_adaptive("imported")


def test_an_unknown_strategy_is_refused_with_the_names_it_could_be():
    with pytest.raises(registry.StrategyRefused) as refused:
        registry.get("deep")
    assert str(refused.value) == f"unknown strategy 'deep' ({', '.join(registry.STRATEGIES)})"
    assert "depth, rrf, borda, sampled" in str(refused.value)


@pytest.mark.parametrize("name, message", [("depth", "depth pooling needs --depth K"),
                                           ("rrf", "rrf pooling needs a budget"),
                                           ("borda", "borda pooling needs a budget")])
def test_a_strategy_says_what_it_cannot_work_without(name, message):
    with pytest.raises(registry.StrategyRefused, match=message):
        registry.get(name).build({}, registry.PoolParams())


def test_the_build_pool_command_offers_every_registered_strategy():
    result = subprocess.run([sys.executable, "manage.py", "build_pool", "--help"], cwd=ROOT, capture_output=True,
                            text=True, env={"PATH": "/usr/bin:/bin", "DEBUG": "1", "WORKBENCH_VAR_DIR": "/tmp/wb-help"})
    assert result.returncode == 0, result.stderr
    assert "{" + ",".join(registry.STRATEGIES) + "}" in result.stdout.replace("\n", "").replace(" ", "")


def test_the_model_the_form_the_command_and_the_readme_offer_the_same_strategies():
    """One registry is the only list of strategies: every place that offers them agrees with it."""
    from pooling.forms import PoolBuildForm
    from pooling.management.commands.build_pool import Command

    names = registry.names()
    model = [value for value, _ in Pool._meta.get_field("strategy").choices if value != registry.IMPORTED[0]]
    form = [value for value, _ in PoolBuildForm.base_fields["strategy"].choices]
    parser = Command().create_parser("manage.py", "build_pool")
    command = next(a.choices for a in parser._actions if a.dest == "strategy")
    readme = (ROOT / "README.md").read_text()
    listed = re.search(r"--strategy ([a-z|]+)", readme).group(1).split("|")
    default = next(a.default for a in parser._actions if a.dest == "strategy")
    assert model == form == list(command) == names
    assert sorted([default, *listed]) == sorted(names), "README's `--strategy a|b|...` list drifted from the registry"


def test_no_second_list_of_strategies_exists():
    import pooling.strategies as S
    import pooling.strategies.adaptive as adaptive

    assert S.STRATEGIES is registry.STRATEGIES
    assert not hasattr(adaptive, "STRATEGIES")
    assert type(registry.adaptive_pool("mtf", {}, 1)).__name__ == "MoveToFront"
