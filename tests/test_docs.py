"""The README a newcomer reads to the end, and the documentation site under docs/ (built by `make docs`,
which `make test` runs with --strict; these checks say what is wrong without building the site)."""

import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _hook(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", DOCS / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _nav_pages(nav) -> list[str]:
    pages = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages.extend(_nav_pages(value) if isinstance(value, list) else [value])
    return pages


def test_the_readme_is_at_most_400_lines():
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= 400, f"README.md has {lines} lines; move the rest to docs/"


def test_every_page_of_the_nav_exists_and_every_page_is_in_the_nav():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    generated = set(_hook("reference").GENERATED)
    nav = _nav_pages(config["nav"])
    missing = [p for p in nav if not (DOCS / p).is_file() and p not in generated]
    assert not missing, f"pages in mkdocs.yml's nav that do not exist: {missing}"
    written = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "hooks" not in p.parts}
    assert not written - set(nav), f"pages left out of the nav: {sorted(written - set(nav))}"
    assert not generated & written, "a generated reference page is committed under docs/"
    assert {"organizer.md", "assessor.md", "participant.md", "researcher.md"} <= set(nav)


def test_make_test_builds_the_site_strictly():
    makefile = (ROOT / "Makefile").read_text()
    test_recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert "docs" in test_recipe
    assert re.search(r"^docs:.*\n\t.*mkdocs build --strict", makefile, re.M)


def test_the_reference_pages_name_every_declared_strategy_judge_and_measure():
    from evaluation.engine import spec
    from judging import machine
    from pooling.strategies import registry

    reference = _hook("reference")
    strategies, judges, measures = (reference.render(p) for p in reference.GENERATED)
    assert all(f"`{name}`" in strategies for name in registry.STRATEGIES)
    assert all(f"`{choice.name}`" in judges for choice in machine.JUDGES)
    assert all(f"| `{name}` |" in measures for name in spec.SPECS)


def test_a_declared_parameter_shows_in_the_strategies_table_with_its_type_bounds_and_default():
    reference = _hook("reference")

    @dataclass(frozen=True)
    class Knobs:
        rounds: int = field(default=7, metadata={"help": "Rounds of sampling", "min": 1, "max": 50})

    table = reference.parameter_table(reference.parameters_of(Knobs))
    assert "| `rounds` | int | `7` | 1 … 50 |" in table and "Rounds of sampling" in table


def test_every_environment_variable_the_code_reads_is_documented():
    configuration = _hook("configuration")
    described = {name for section in configuration.MEANINGS.values() for name in section}
    found = configuration.read_variables()
    assert {"DATABASE_URL", "SECRET_KEY", "MAX_RUN_FILE_MB"} <= set(found)
    assert not set(found) - described, f"describe these in docs/hooks/configuration.py: {set(found) - described}"
