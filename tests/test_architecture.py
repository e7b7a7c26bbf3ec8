"""The numeric and parsing core stays free of Django (shared/DESIGN.md)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DJANGO_FREE = ["workbench.formats", "pooling.strategies", "evaluation.engine", "judging.agreement"]


@pytest.mark.parametrize("module", DJANGO_FREE)
def test_core_package_imports_without_django(module):
    if not (ROOT / module.replace(".", "/")).exists() and not (ROOT / (module.replace(".", "/") + ".py")).exists():
        pytest.fail(f"{module} is missing")
    code = (f"import {module}, sys; loaded = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'));"
            "print(loaded[:5]); sys.exit(1 if loaded else 0)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"{module} imports Django: {result.stdout}{result.stderr}"
