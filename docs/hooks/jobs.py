"""MkDocs hook: the background jobs' table, from their declarations at build time.

Each app's ``tasks.py`` declares its job kinds (``JOB_KINDS``, :class:`workbench.jobs.kinds.JobKind`); they are
read in a process of its own that sets Django up (no database is opened) and the table replaces the line
``<!-- job-kinds -->`` of a page. A kind declared in a ``tasks.py`` shows here without a change to the docs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "<!-- job-kinds -->"
_READ = ("import django, json; django.setup(); from workbench.jobs import kinds as job_kinds; "
         "print(json.dumps(job_kinds.table()))")


def job_kinds() -> list[dict]:
    """The declared job kinds (``workbench.jobs.kinds.table()``), as a worker registers them."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "workbench.settings"}
    done = subprocess.run([sys.executable, "-c", _READ], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the job kinds could not be read: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cell(text) -> str:
    return " ".join(str(text).replace("|", "\\|").split()) or "–"


def jobs_table(kinds: list[dict]) -> str:
    """One row per kind: its name (``Job.kind``), label, task, parameters, whether a dead one is retried and
    whether it splits into parts, and what it does."""
    rows = [f"| `{k['name']}` | {_cell(k['label'])} | `{k['task']}` | "
            f"{', '.join(f'`{p}`' for p in k['params']) or '–'} | {'yes' if k['retry'] else '–'} | "
            f"{'yes' if k['splits'] else '–'} | {_cell(k['help'])} |" for k in kinds]
    return (f"{len(kinds)} kinds of job, generated from the `JOB_KINDS` each app's `tasks.py` declares "
            "(`workbench.jobs.kinds`). *Retried*: a job whose worker died is queued again, once (it writes in one "
            "transaction); *parts*: it splits into parts any worker claims, then a join.\n\n"
            "| kind | label | task | parameters | retried | parts | what it does |\n|---|---|---|---|---|---|---|\n"
            + "\n".join(rows) + "\n")


def on_page_markdown(markdown: str, page, config, files) -> str:
    if PLACEHOLDER not in markdown:
        return markdown
    return markdown.replace(PLACEHOLDER, jobs_table(job_kinds()))
