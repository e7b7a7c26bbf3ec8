"""One registry of pooling strategies: the service, the command, the model and judging all read it."""

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
    assert registry.adaptive_names() == ["mtf", "maxmean", "bandit"]
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
