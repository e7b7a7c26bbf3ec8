"""Benchmark: how long the read-only commands take as whole processes on a one-line input (issue 40: <= 0.15 s).

``manage.py trec_eval`` on a one-line qrels and a one-line run (no Django, no database), then the commands
that start Django (``evaluate`` and ``show_collection`` on a one-topic collection in a throwaway SQLite
database; ``compare`` and ``curves`` on the same files), each run REPEATS times: the median and the fastest
wall time, and the bare interpreter (``python -c pass``) for scale. trec_eval's C binary is timed beside them
when one is found: ``--trec-eval PATH`` (or ``$TREC_EVAL``), or built with ``make`` from a checkout of
https://github.com/usnistgov/trec_eval given as ``--trec-eval-src DIR`` (or ``$TREC_EVAL_SRC``), as
bench_engine.py does, else ``trec_eval`` on the PATH. pip's pytrec_eval(-terrier) ships trec_eval's code as a
Python extension, not the binary, so without one the ratio is not printed. On a machine others are using,
every figure grows alike: compare them with ``python -c pass`` of the same run. ``--only trec_eval``: the
rows of the engine's command line alone (no database prepared, no Django command), beside ``import numpy``
with one BLAS thread (all it loads on small files, as ``manage.py`` starts it) and ``import numpy,
pyarrow.compute`` (what larger files add). ``--only django``: ``django.setup()``, ``evaluate`` and
``show_collection`` (and the interpreter); with ``--before DIR``, another checkout of the project (``git worktree
add DIR COMMIT``) whose same rows are timed in the same run, each of its runs alternating with this one's so
that both see the same load.

Run: .venv/bin/python tests/benchmarks/bench_startup.py [--repeats 7] [--only trec_eval | --only django
     [--before DIR]] [--trec-eval PATH | --trec-eval-src DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_engine import trec_eval_binary

ROOT = Path(__file__).resolve().parents[2]
TARGET = 0.15  # seconds, the bound for a read-only command


def timed(argv: list[str], env: dict, repeats: int, cwd: Path = ROOT) -> tuple[float, float, float] | tuple[str]:
    """(median, fastest) wall seconds of ``argv`` run ``repeats`` times and its median CPU seconds (user + system:
    what a busy machine inflates least), or (why it failed,): the last line of its standard error; the other
    commands are still timed, and the benchmark exits non-zero at the end."""
    times, cpu = [], []
    for _ in range(repeats):
        before, start = os.times(), time.perf_counter()
        done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        after = os.times()
        cpu.append(after.children_user - before.children_user + after.children_system - before.children_system)
        if done.returncode != 0:
            return (f"failed ({done.returncode}): {(done.stderr.strip().splitlines() or [''])[-1][:200]}",)
    return statistics.median(times), min(times), statistics.median(cpu)


def timed_against(argv: list[str], env: dict, repeats: int, other: Path) -> list[tuple]:
    """:func:`timed` of ``argv`` here and in the checkout ``other``, one run at a time, alternating which goes
    first: [(median, fastest, CPU) here, the same there] (or a failure's (why,))."""
    runs: dict[Path, list] = {ROOT: [], other: []}
    for i in range(repeats):
        for cwd in (ROOT, other) if i % 2 == 0 else (other, ROOT):
            runs[cwd].append(timed(argv, env, 1, cwd))
    return [next((r for r in found if len(r) == 1), None) or (statistics.median(r[0] for r in found),
                                                              min(r[1] for r in found), statistics.median(r[2] for r in found))
            for found in runs.values()]


def prepare(folder: Path, env: dict) -> tuple[Path, Path]:
    """The one-line files, two-topic ones for ``compare`` (a paired test needs two), and a one-topic
    collection 'startup' holding the run and the qrels."""
    qrels, run, topics = folder / "one.qrels", folder / "one.run", folder / "topics.tsv"
    qrels.write_text("1 0 d1 1\n")
    run.write_text("1 Q0 d1 1 1.0 one\n")
    (folder / "two.qrels").write_text("1 0 d1 1\n2 0 d2 1\n")
    (folder / "two.run").write_text("1 Q0 d1 1 1.0 two\n2 Q0 d2 1 1.0 two\n")
    topics.write_text("1\tone topic\n")
    for argv in (["migrate", "-v", "0"], ["create_collection", "startup"], ["import_topics", "startup", str(topics)],
                 ["import_runs", "startup", str(run)], ["import_qrels", "startup", str(qrels)]):
        done = subprocess.run([sys.executable, "manage.py", *argv], env=env, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:  # the database's commands then fail alike, each on its own row
            print(f"manage.py {' '.join(argv)} failed: {done.stderr.strip()[-400:]}", file=sys.stderr)
            break
    return qrels, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", choices=["trec_eval", "django"],
                        help="only the engine's command line and its libraries, or only the Django start-up's rows")
    parser.add_argument("--before", type=Path, help="with --only django: another checkout timed in the same run")
    parser.add_argument("--trec-eval", help="trec_eval's C binary (or $TREC_EVAL, else trec_eval on the PATH)")
    parser.add_argument("--trec-eval-src", type=Path, help="a trec_eval source checkout to build (or $TREC_EVAL_SRC)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        folder = Path(tmp)
        args.workdir = folder
        binary, why = trec_eval_binary(args)
        if binary is None and shutil.which("trec_eval"):
            binary, why = Path(shutil.which("trec_eval")), ""
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}", "WORKBENCH_VAR_DIR": str(folder),
               "DJANGO_DEBUG": "0", "DJANGO_SETTINGS_MODULE": "workbench.settings"}
        if args.only == "trec_eval":
            qrels, run = folder / "one.qrels", folder / "one.run"
            qrels.write_text("1 0 d1 1\n")
            run.write_text("1 Q0 d1 1 1.0 one\n")
        else:
            qrels, run = prepare(folder, env)
        manage = [sys.executable, "manage.py"]
        cases = [("python -c pass (the interpreter alone)", [sys.executable, "-c", "pass"]),
                 ("import numpy, one BLAS thread (trec_eval on small files)",  # as manage.py sets it
                  [sys.executable, "-c", "import os; os.environ['OPENBLAS_NUM_THREADS'] = '1'; import numpy"]),
                 ("import numpy, pyarrow.compute (the engine's libraries)",
                  [sys.executable, "-c", "import numpy, pyarrow.compute"]),
                 ("django.setup() (what a Django command starts with)",
                  [sys.executable, "-c", "import django; django.setup()"]),
                 ("manage.py trec_eval QRELS RUN", [*manage, "trec_eval", str(qrels), str(run)]),
                 ("manage.py evaluate startup", [*manage, "evaluate", "startup"]),
                 ("manage.py show_collection startup", [*manage, "show_collection", "startup"]),
                 ("manage.py compare QRELS RUN RUN (2 lines)",
                  [*manage, "compare", str(folder / "two.qrels"), *[str(folder / "two.run")] * 2]),
                 ("manage.py curves QRELS RUN", [*manage, "curves", str(qrels), str(run)])]
        if args.only == "trec_eval":
            cases = [case for case in cases if "django" not in case[0] and (
                not case[0].startswith("manage.py") or case[0].startswith("manage.py trec_eval"))]
        if args.only == "django":
            cases = [case for case in cases if case[0].startswith(("python -c", "django", "manage.py evaluate",
                                                                     "manage.py show_collection"))]
        if binary is not None and args.only != "django":
            cases.insert(1, ("trec_eval (C binary)", [str(binary), str(qrels), str(run)]))
        if args.before and args.only == "django":
            rows = []
            for name, argv in cases:
                here, there = timed_against(argv, env, args.repeats, args.before.resolve())
                rows += [(name, *here), (f"{name[:42]} (--before)", *there)]
        else:
            rows = [(name, *timed(argv, env, args.repeats)) for name, argv in cases]
    binary = next((row[1] for row in rows if row[0].startswith("trec_eval (C") and len(row) == 4), None)
    print(f"{'command':<55} {'median s':>9} {'fastest s':>9} {'CPU s':>6}  {'<= 0.15 s':>9}"
          + ("  x C binary" if binary else ""))
    for name, *figures in rows:
        if len(figures) == 1:
            print(f"{name:<55} {figures[0]}")
            continue
        median, fastest, cpu = figures
        bound = "" if not name.startswith("manage.py") else ("yes" if median <= TARGET else "no")
        ratio = f"  {median / binary:>10.0f}" if binary else ""
        print(f"{name:<55} {median:>9.3f} {fastest:>9.3f} {cpu:>6.2f}  {bound:>9}{ratio}")
    if not binary:
        print(f"{why}; pytrec_eval ships trec_eval's code as a Python extension, not the program, so the ratio "
              "to the binary is not printed")
    print(f"{args.repeats} runs each, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    if any(len(row) == 2 for row in rows):
        sys.exit("some commands failed: see their rows")


if __name__ == "__main__":
    main()
