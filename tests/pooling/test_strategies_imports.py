"""pooling.strategies is Django-free: importing it loads no Django module."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pooling_strategies_import_no_django():
    code = ("import sys; import pooling.strategies; "
            "bad = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')); "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
