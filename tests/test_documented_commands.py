"""Every `manage.py` command the README and the guides show runs as written on the demo (issue 40).

Each document's fenced code blocks are read as a user reads them (a backslash joins the next line, a trailing
`# comment` is dropped) and every line that runs `manage.py` is run in a shell, in order, in a fresh working
folder holding a freshly built demo (`manage.py build_demo --files demo-files`, as the README says) on its own
SQLite database: it must exit 0, print what it did and never show a traceback. Left out: the server and the
worker (`runserver`, `db_worker`), the interactive `createsuperuser`, and lines with a placeholder a reader must
replace, written `<like-this>` (keep those few). docs/api.md's examples run in tests/api/test_doc_examples.py
against a live server; docs/benchmarks.md's scripts are the benchmarks. The whole file costs about 90 s of CPU
(each command is a process of its own, and two load the embedding judge's model).
"""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = ["README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))
                            if p.name not in {"benchmarks.md", "api.md"})]
NOT_RUN = ("runserver", "db_worker", "createsuperuser")
PLACEHOLDER = re.compile(r"<[A-Za-z][^<>\s]*>")
COMMENT = re.compile(r"\s+#.*$")
TIMEOUT = 300

pytestmark = pytest.mark.slow


def documented_commands(text: str) -> list[tuple[int, int, str]]:
    """``(block, line number, command)`` of every `manage.py` line in the fenced code blocks of ``text``."""
    found, fenced, pending, start, block = [], False, "", 0, 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("```"):
            fenced, pending, block = not fenced, "", block + (not fenced)
            continue
        if not fenced or (not pending and line.startswith("#")):
            continue
        if not pending:
            start = number
        line = COMMENT.sub("", line) if "#" in line else line
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        command, pending = pending + line, ""
        if "manage.py" in command:
            found.append((block, start, command))
    return found


def runnable(command: str) -> bool:
    return not PLACEHOLDER.search(command) and not any(
        re.search(rf"manage\.py\s+{name}\b", command) for name in NOT_RUN)


def _environment(var: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in {"DATABASE_URL", "S3_BUCKET", "CORPUS_DIRS", "JOB_PARTS", "DJANGO_SETTINGS_MODULE"}}
    env.update(WORKBENCH_VAR_DIR=str(var), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               PYTHONUNBUFFERED="1")
    return env


def _shell(command: str, cwd: Path, var: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=_environment(var), capture_output=True, text=True,
                          timeout=TIMEOUT)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """A working folder as a new user has it after `make demo` and `build_demo --files demo-files`: built once
    per session (pytest-xdist's workers share the first one's, under their common temporary folder)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "documented-commands-demo"
    folder.mkdir(exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".built").exists():
            (folder / "manage.py").symlink_to(ROOT / "manage.py")
            (folder / ".venv").symlink_to(Path(sys.executable).parent.parent)
            for command in ("python manage.py migrate --noinput", "python manage.py build_demo --files demo-files"):
                done = _shell(command, folder, folder / "var")
                assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
            (folder / ".built").touch()
    return folder


def _fresh_copy(demo: Path, target: Path) -> Path:
    shutil.copytree(demo, target, symlinks=True, ignore=shutil.ignore_patterns(".lock", ".built"))
    return target


def _redirected_to(command: str) -> str | None:
    words = shlex.split(command)
    return words[words.index(">") + 1] if ">" in words and words.index(">") + 1 < len(words) else None


def _problem(command: str, done: subprocess.CompletedProcess, cwd: Path) -> str | None:
    output = (done.stdout + done.stderr).strip()
    if "Traceback (most recent call last)" in output:
        return "printed a traceback"
    if done.returncode != 0:
        return f"exit status {done.returncode}"
    target = _redirected_to(command)
    if target is not None:
        return None if (cwd / target).is_file() and (cwd / target).stat().st_size else f"wrote nothing to {target}"
    return None if output else "printed nothing"


def test_the_extraction_reads_commands_as_a_user_reads_them():
    text = ("Prose `python manage.py not_this`.\n\n```sh\npython manage.py create_collection x --name \"X\" \\\n"
            "    --relevant-from 1   # a comment\n# python manage.py commented\n"
            "python manage.py import_topics x <TOPICS>\n.venv/bin/python manage.py db_worker\n```\n")
    commands = documented_commands(text)
    assert commands == [(1, 4, 'python manage.py create_collection x --name "X" --relevant-from 1'),
                        (1, 7, "python manage.py import_topics x <TOPICS>"),
                        (1, 8, ".venv/bin/python manage.py db_worker")]
    assert [runnable(c) for _, _, c in commands] == [True, False, False]


#: The working folder after each sequence of blocks that ran without a failure, by the commands run: a document
#: that starts with the same blocks as one run before (the guides repeat the README's first track) goes on from
#: there instead of running them again on the same state.
_AFTER: dict[tuple[str, ...], Path] = {}


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_documented_command_runs_on_the_demo(document, demo, tmp_path):
    commands = [(b, n, c) for b, n, c in documented_commands((ROOT / document).read_text(encoding="utf-8"))
                if runnable(c)]
    if not commands:
        return  # the page shows no command to run
    cwd = _fresh_copy(demo, tmp_path / "work")
    failures, done_so_far, reused = [], (), True
    for block in sorted({b for b, _, _ in commands}):
        lines = [(n, c) for b, n, c in commands if b == block]
        done_so_far += tuple(c for _, c in lines)
        if reused and done_so_far in _AFTER:
            shutil.rmtree(cwd)
            _fresh_copy(_AFTER[done_so_far], cwd)
            continue
        reused, before = False, len(failures)
        for number, command in lines:
            done = _shell(command, cwd, cwd / "var")
            problem = _problem(command, done, cwd)
            if problem:
                output = "\n      ".join((done.stdout + done.stderr).strip().splitlines()[-12:])
                failures.append(f"{document}:{number}: {command}\n   -> {problem}\n      {output}")
        if len(failures) == before:
            _AFTER[done_so_far] = _fresh_copy(cwd, tmp_path / f"after-block-{block}")
    assert not failures, f"{len(failures)} of {len(commands)} documented commands fail:\n" + "\n".join(failures)
