"""The house rules of shared/DESIGN.md and README's Architecture section, checked on the source.

- The numeric and parsing cores stay free of Django.
- Layers point down only: workbench <- pooling <- judging <- evaluation <- participation. No module imports an app above
  its own, not even inside a function (the demo installer alone may use every app).
- No module over 400 lines; no function with a cyclomatic complexity above 15 (radon).
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from radon.complexity import cc_visit

ROOT = Path(__file__).resolve().parent.parent
DJANGO_FREE = [
    "workbench.formats", "workbench.cache", "pooling.strategies", "evaluation.engine", "judging.agreement",
    "judging.allocation", "judging.policies", "judging.machine", "answers.machine",
]
LAYERS = ["workbench", "pooling", "judging", "evaluation", "answers", "participation"]
#: the one module that may install data through every app (`make demo`)
MAY_USE_EVERY_APP = {"workbench/demo/install.py"}
MAX_LINES = 400
MAX_COMPLEXITY = 15


def _sources(*packages: str) -> list[Path]:
    files = [p for package in packages for p in sorted((ROOT / package).rglob("*.py"))]
    return [p for p in files if "migrations" not in p.parts and ".venv" not in p.parts]


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, wherever it stands (module level or in a function)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("module", DJANGO_FREE)
def test_core_package_imports_without_django(module):
    if not (ROOT / module.replace(".", "/")).exists() and not (ROOT / (module.replace(".", "/") + ".py")).exists():
        pytest.fail(f"{module} is missing")
    code = (f"import {module}, sys; loaded = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'));"
            "print(loaded[:5]); sys.exit(1 if loaded else 0)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"{module} imports Django: {result.stdout}{result.stderr}"


@pytest.mark.parametrize("module", DJANGO_FREE)
def test_core_package_never_names_django_or_a_django_module(module):
    base = ROOT / module.replace(".", "/")
    files = sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]
    offending = []
    for path in files:
        for line, name in _imported_modules(path):
            top = name.split(".")[0]
            if top == "django" or (top in LAYERS and not _is_django_free(name)):
                offending.append(f"{path.relative_to(ROOT)}:{line}: imports {name}")
    assert not offending, "\n".join(offending)


def _is_django_free(module: str) -> bool:
    return any(module == core or module.startswith(core + ".") for core in DJANGO_FREE)


def test_layers_point_down_only():
    upward = []
    for level, app in enumerate(LAYERS):
        above = set(LAYERS[level + 1:])
        for path in _sources(app):
            relative = path.relative_to(ROOT).as_posix()
            if relative in MAY_USE_EVERY_APP:
                continue
            for line, name in _imported_modules(path):
                if name.split(".")[0] in above:
                    upward.append(f"{relative}:{line}: {app} imports {name}")
    assert not upward, "upward imports (workbench <- pooling <- judging <- evaluation <- participation):\n" + "\n".join(upward)


def test_the_layer_check_sees_an_import_inside_a_function(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from evaluation.views import overview\n    return overview\n")
    assert _imported_modules(module) == [(2, "evaluation.views")]


def test_no_module_is_longer_than_400_lines():
    long = [f"{p.relative_to(ROOT)}: {n} lines" for p in _sources(*LAYERS, "tests")
            if (n := len(p.read_text().splitlines())) > MAX_LINES]
    assert not long, "split these by responsibility:\n" + "\n".join(long)


def test_no_function_is_more_complex_than_15():
    complex_ = [f"{p.relative_to(ROOT)}:{block.lineno}: {block.fullname} has complexity {block.complexity}"
                for p in _sources(*LAYERS) for block in _functions(cc_visit(p.read_text()))
                if block.complexity > MAX_COMPLEXITY]
    assert not complex_, "\n".join(complex_)


def _functions(blocks):
    """Functions and methods (with their closures) of radon's blocks; a class's own figure is not a function's."""
    for block in blocks:
        if hasattr(block, "methods"):
            yield from _functions(block.methods)
            yield from _functions(getattr(block, "inner_classes", []))
        else:
            yield block
            yield from _functions(getattr(block, "closures", []))
