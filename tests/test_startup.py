"""Start-up (issue 40: commands that start fast): manage.py runs a command that declares ``STANDALONE`` without
starting Django, with the same output and exit codes as through Django; every other command goes through Django;
the strategy registry every start-up reads imports no implementation."""

from __future__ import annotations

import importlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import manage  # noqa: E402

COMMANDS = sorted(ROOT.glob("*/management/commands/[a-z]*.py"))


def run_manage(*args: str, settings: str = "no_such_settings_module") -> subprocess.CompletedProcess:
    """manage.py in a process whose Django settings cannot even be imported: only a command that does not
    start Django can answer."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)


def test_trec_eval_answers_without_django_as_its_engine_does(tmp_path):
    from evaluation.engine.cli import main

    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
    run.write_text("1 Q0 d2 1 2.0 mine\n1 Q0 d1 2 1.0 mine\n")
    out = io.StringIO()
    assert main(["-q", "-m", "map", str(qrels), str(run)], out, io.StringIO()) == 0
    done = run_manage("trec_eval", "-q", "-m", "map", str(qrels), str(run))
    assert (done.returncode, done.stdout, done.stderr) == (0, out.getvalue(), "")
    assert "map                   \tall\t0.5000" in done.stdout
    bad = run_manage("trec_eval", str(qrels), str(tmp_path / "missing"))  # errors and codes are trec_eval's
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.splitlines()) == 1
    assert run_manage("trec_eval").returncode == 1


def test_a_command_without_standalone_still_starts_django():
    done = run_manage("show_collection", "x")
    assert done.returncode != 0 and "no_such_settings_module" in done.stderr


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: p.stem)
def test_a_declared_standalone_entry_runs_without_loading_any_app(path):
    entry = manage.standalone(path.stem)
    module = importlib.import_module(f"{path.parent.parent.parent.name}.management.commands.{path.stem}")
    declared = getattr(module, "STANDALONE", None)
    assert entry == (f"{module.__name__}:Command" if declared is True else declared)  # read without importing it
    if not entry:
        return
    target, _, name = entry.partition(":")
    if declared is not True:  # a function of a module that does not even import Django
        assert callable(getattr(importlib.import_module(target), name))
        done = subprocess.run([sys.executable, "-c", f"import sys, {target}; sys.exit('django' in sys.modules)"],
                              cwd=ROOT, capture_output=True)
        assert done.returncode == 0, f"{target} imports Django"
        return
    code = ("import atexit, runpy, sys; from django.apps import apps; "
            "atexit.register(lambda: sys.stderr.write(f'apps loaded: {apps.ready}')); "
            f"sys.argv = ['manage.py', {path.stem!r}, '--help']; runpy.run_path('manage.py', run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "workbench.settings"})
    assert done.returncode == 0 and done.stdout.startswith(f"usage: manage.py {path.stem} "), done.stderr
    assert done.stderr.endswith("apps loaded: False")


def test_a_file_command_without_django_prints_and_refuses_as_through_django(tmp_path, capsys):
    from django.core.management import CommandError, call_command

    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
    run.write_text("1 Q0 d2 1 2.0 mine\n1 Q0 d1 2 1.0 mine\n")
    call_command("curves", str(qrels), str(run))
    done = run_manage("curves", str(qrels), str(run), settings="workbench.settings")
    assert (done.returncode, done.stdout, done.stderr) == (0, capsys.readouterr().out, "")
    assert done.stdout.splitlines()[0] == "topic\trecall\tprecision"
    with pytest.raises(CommandError) as refused:
        call_command("curves", str(qrels), str(tmp_path / "missing"))
    done = run_manage("curves", str(qrels), str(tmp_path / "missing"), settings="workbench.settings")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"Error: {refused.value}\n")


def test_names_that_are_not_commands_go_to_django():
    assert manage.standalone("trec_eval") == "evaluation.engine.cli:main"
    assert manage.standalone("evaluate") is None
    assert manage.standalone("../manage") is None and manage.standalone("nothing_like_this") is None


def test_the_strategy_registry_declares_without_importing_the_implementations():
    """The pool model's choices read the registry at every start-up: the declarations are light, pandas and
    pyarrow come with the first pool built."""
    code = ("import sys; from pooling.strategies import registry; "
            "assert 'cal' in registry.names(), registry.names(); "
            "print(sorted(m for m in ('pandas', 'pyarrow', 'scipy', 'sklearn') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr


def test_django_starts_without_the_libraries_only_some_work_needs(tmp_path):
    """Every command and web worker pays django.setup(): SciPy, scikit-learn and matplotlib come with the work
    that uses them (a calibration, a statistic, a plot), numpy, pandas and pyarrow with the first run, qrels or
    pool read, pydantic (django-ninja) with the HTTP API and psycopg with a PostgreSQL connection, not with the
    apps and registries every start-up reads."""
    code = ("import sys, django; django.setup(); "
            "print(sorted(m for m in ('scipy', 'sklearn', 'matplotlib', 'numpy', 'pandas', 'pyarrow', 'pydantic',"
            " 'ninja', 'psycopg') if m in sys.modules))")
    # on the default database: on PostgreSQL the backend itself is psycopg (the test suite's PostgreSQL run)
    environment = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**environment, "DJANGO_SETTINGS_MODULE": "workbench.settings", "SERVER_WARM_UP": "0",
                               "WORKBENCH_VAR_DIR": str(tmp_path)})
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr


def test_a_command_loads_neither_the_pages_nor_the_api_and_the_registries_are_whole_when_read(tmp_path):
    """A command runs Django's system checks but those of the pages (the URLconf, the templates, the admin): it
    imports no view and not the HTTP API. What the apps declare is still all there when read: every job kind
    (each app's tasks.py), every upload kind, every home page section and release file."""
    code = ("import atexit, runpy, sys\n"
            "def after():\n"
            "    from evaluation import release_parts\n"
            "    from workbench import home_sections\n"
            "    from workbench.collections import uploads\n"
            "    from workbench.jobs import kinds\n"
            "    loaded = sorted(m for m in ('workbench.urls', 'workbench.api.v1', 'ninja') if m in sys.modules)\n"
            "    kinds.discover(), home_sections._discover(), release_parts._discover()\n"
            "    print(loaded, len(kinds.KINDS) >= 22, {'runs', 'qrels', 'machine_labels'} <= set(uploads.KINDS),\n"
            "          len(home_sections.SECTIONS) > 0, len(release_parts.CONTRIBUTORS) > 0)\n"
            "atexit.register(after)\n"
            "sys.argv = ['manage.py', 'show_collection', 'no-such-collection']\n"
            "runpy.run_path('manage.py', run_name='__main__')")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "workbench.settings", "WORKBENCH_VAR_DIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env)
    assert done.returncode == 1 and done.stderr.startswith("Error: "), done.stderr  # checked, then refused
    assert done.stdout.strip() == "[] True True True True", done.stderr


def test_trec_eval_on_small_files_runs_on_numpy_alone(tmp_path):
    """``manage.py trec_eval`` on small, clean files (most command-line uses) reads and ranks them in plain
    Python: the libraries it loads beyond numpy cost more than the evaluation, so neither pandas nor pyarrow
    (nor ``numpy.ma``, which ``np.unique`` imports) is imported, whatever the measures; a large run still is."""
    qrels, run, large = tmp_path / "q", tmp_path / "r", tmp_path / "large"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n")
    run.write_text("1 Q0 d2 1 2.0 mine\n1 Q0 d1 2 1.0 mine\n2 Q0 d3 1 1.0 mine\n")
    large.write_text("".join(f"1 Q0 x{i} {i} 1.0 mine\n" for i in range(60_000)))
    code = ("import contextlib, io, runpy, sys; sys.argv = ['manage.py', 'trec_eval', *sys.argv[1:]]\n"
            "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
            "    runpy.run_path('manage.py', run_name='__main__')\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'pyarrow', 'scipy', 'django'}),"
            " 'numpy.ma' in sys.modules)")
    for measures in (["-m", "map"], ["-q", "-m", "all_trec"], ["-q", "-J", "-m", "all_ext"]):
        done = subprocess.run([sys.executable, "-c", code, *measures, str(qrels), str(run)], cwd=ROOT,
                              capture_output=True, text=True)
        assert (done.returncode, done.stdout.strip()) == (0, "[] False"), done.stderr
    done = subprocess.run([sys.executable, "-c", code, str(qrels), str(large)], cwd=ROOT, capture_output=True, text=True)
    assert (done.returncode, done.stdout.split("]")[0]) == (0, "['pyarrow'"), done.stderr
