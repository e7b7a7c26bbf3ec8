"""Benchmark: the split jobs (``JOB_PARTS``, ``workbench.jobs.subjobs``) with one ``db_worker`` and with two.

    .venv/bin/python tests/benchmarks/bench_split_jobs.py [--runs 100] [--topics 50] [--depth 1000]
        [--pool-depth 100] [--repeat 3] [--postgres postgres://postgres@127.0.0.1:5432/test] [--s3]
        [--generated DIR] [--jobs import,pool,evaluation,board]

Generates a track as ``bench_evaluation.py`` does (seeded; with ``--generated`` the files are kept in DIR and
read again next time) into a fresh database (SQLite, or a fresh PostgreSQL database with ``--postgres``,
dropped after), then times each job of ``--jobs`` with 1 worker (``JOB_PARTS=1``: not split) and with 2
workers (``JOB_PARTS=2``), each worker in its own working directory (and, with ``--s3``, its own ``VAR_DIR``:
the files are in the bucket; without, the workers share the local disk):

- the import of every run file as one job (staged first, as an upload; split by files), into a collection of
  its own each time (a job left out is done in this process);
- a new depth-``--pool-depth`` pool over every run (split by topic; the pool hidden until published); on
  PostgreSQL, the ceiling PostgreSQL itself sets on this machine: the same entries copied into an empty table
  like the entries' from one session, and by the two parts' topics from two sessions at once (no workbench code);
- the full evaluation (leaderboard and leave-one-out by run and by team; split by topic) of that pool judged
  (30% relevant), cold: no board stored (a stored board is what one worker's report reads);
- the board job the leaderboard's first page waits for ("leaderboard cold", extras included; split by topic),
  the stored boards removed before each.

With ``--s3`` the files go to a SeaweedFS server started for the run. A job is timed from queued to done, once
every worker is up (with the jobs' modules loaded, as a worker has after its first job), nothing else is
queued and, on PostgreSQL, after a checkpoint (the WAL of the step before flushed); the parts alone (first start
to last end), the planning and the join are printed too. Each job is timed ``--repeat`` times in each layout,
the layouts alternating: the machine is shared and its timings move by 10-20% from one run to the next (more
for two processes at once than for one), so the table shows each layout's median, and a note every time.
Checks that every layout and attempt gives the same runs, pool, report and board. Prints a markdown table.
Each worker is one process, so two workers use two cores.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from contextlib import ExitStack
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from bench_evaluation import generate  # noqa: E402
from copy_ceiling import copy_ceiling  # noqa: E402

from tests.browser.stack import _database  # noqa: E402


def _setup(database: str, var: Path) -> None:
    os.environ.update({"DATABASE_URL": database, "WORKBENCH_VAR_DIR": str(var), "DEBUG": "0",
                       "SECRET_KEY": "bench-" + "x" * 50, "DJANGO_SETTINGS_MODULE": "workbench.settings"})
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.conf import settings

    settings.BOARD_ON_CHANGE = False  # no board job behind the timings (a stored board is what the report reads)


def _generated(tmp: Path, args) -> tuple[list[Path], Path]:
    """The track's files: generated in ``tmp``, or in ``--generated`` once and read from there again (1,000
    runs take minutes to generate; the same seed gives the same files)."""
    folder = Path(args.generated) if args.generated else tmp
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"run{r:03d}.txt" for r in range(args.runs)]
    if not (args.generated and all(p.exists() for p in paths) and (folder / "topics.tsv").exists()):
        paths, topics_path, _ = generate(folder, args.runs, args.topics, args.depth)
    return paths, folder / "topics.tsv"


def _import(tmp: Path, args) -> object:
    from workbench.collections.services import RunSpec, collection_create, runs_import, topics_import

    paths, topics_path = _generated(tmp, args)
    collection = collection_create(slug="bench")
    topics_import(collection=collection, source=topics_path)
    runs_import(collection=collection, specs=[RunSpec(source=p, team=f"team{i // 3}") for i, p in enumerate(paths)])
    return collection


def _judge(collection, tmp: Path, pool_name: str) -> None:
    from judging.services import qrels_import
    from pooling.models import Pool

    pool = Pool.objects.get(collection=collection, name=pool_name)
    rng = np.random.default_rng(3)
    with open(tmp / "qrels.txt", "w") as out:
        for qid, docno in pool.entries.values_list("topic__qid", "docno"):
            out.write(f"{qid} 0 {docno} {int(rng.random() < 0.3)}\n")
    qrels_import(collection=collection, source=tmp / "qrels.txt", assessor="nist")


def _run(task, kind: str, collection, params: dict, workers: int, tmp: Path, env: dict, start=None
         ) -> tuple[float, object, float]:
    """Queue the job, start ``workers`` db_workers (JOB_PARTS=workers), time it from queued to done; also the
    time of its parts alone (first start to last end; the whole run for a job not split)."""
    from workbench.jobs import lifecycle as jobs
    from workbench.models import Job

    with ExitStack() as stack:
        homes = []
        for w in range(workers):
            home = Path(tempfile.mkdtemp(dir=tmp, prefix=f"worker{w}-"))
            homes.append(home)
            process = subprocess.Popen(
                [sys.executable, "-c", WORKER, str(ROOT), "--no-reload", "--interval", "0.1", "--no-startup-delay"],
                cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env={**env, "JOB_PARTS": str(workers),  # a disk of its own only when the files are in S3
                     **({"WORKBENCH_VAR_DIR": str(home / "var")} if env.get("S3_BUCKET") else {})})
            stack.callback(lambda p=process: (PEAKS.append(_peak(p.pid)), p.terminate(), p.wait(30)))
        while not all((home / "ready").exists() for home in homes):  # their start-up is not the job's time
            time.sleep(0.2)
        time.sleep(2)  # and polling
        if start is None:
            _drain()  # a board job queued by an earlier change (a pool saved) runs now, not during the timing
        _checkpoint()
        job = start() if start else jobs.job_start(task, kind=kind, collection=collection, params=params)
        start = time.perf_counter()
        while True:
            job.refresh_from_db()
            if job.finished:
                break
            time.sleep(0.1)
        seconds = time.perf_counter() - start
    assert job.status == Job.Status.DONE, job.error
    parts = list(job.parts.order_by("pk"))
    if parts:
        print(f"  {kind}: planned in {(min(p.started_at for p in parts) - job.created_at).total_seconds():.1f} s, "
              f"joined in {(job.finished_at - max(p.finished_at for p in parts)).total_seconds():.1f} s",
              file=sys.stderr)
    for part in parts:
        print(f"  {kind} part {part.params['part']}: {(part.finished_at - part.started_at).total_seconds():.1f} s "
              f"(queued {(part.started_at - part.created_at).total_seconds():.1f} s)", file=sys.stderr)
    # the parallel section: from the first part's start to the last part's end (the rest: planning and join)
    section = (max(p.finished_at for p in parts) - min(p.started_at for p in parts)).total_seconds() if parts else \
        (job.finished_at - job.started_at).total_seconds()
    return seconds, job, section


PEAKS: list[int] = []
NOTES: list[str] = []  # lines printed under the table

#: ``manage.py db_worker`` with what a long-running worker has loaded by its second job (the jobs' modules,
#: scipy's statistics): a fresh process would pay those imports inside the first job it claims, which is
#: not the job's time (and would fall on whichever worker claims a join first)
WORKER = """
import sys
sys.path.insert(0, sys.argv[1])
import os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
import django
django.setup()
from django.conf import settings
settings.BOARD_ON_CHANGE = False  # the board job is timed on its own ("leaderboard cold"), after the evaluations
import scipy.stats  # noqa
import evaluation.tasks, evaluation.report_topics, judging.agreement, pooling.tasks, workbench.tasks  # noqa
from django.core.management import call_command
open("ready", "w").close()  # noqa: SIM115 - the benchmark waits for it
call_command("db_worker", *sys.argv[2:])
"""


def _peak(pid: int) -> int:
    """A worker's peak resident memory (kB), from /proc (0 where there is none)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in text.splitlines() if line.startswith("VmHWM:")), 0)


def _boards(collection, tmp: Path, args, env: dict, rows: list) -> None:
    """The leaderboard's first page after the judgments waits for the board job (scores and the results
    pages' extras, leave-one-out among them): with one worker and with two, the stored files removed in
    between (a board job that finds its board stored does nothing); the same board each time."""
    from evaluation import board, board_extras, board_store, tasks

    def once(workers: int, attempt: int):
        for folder in (str(collection.pk), f"{collection.pk}/extras"):
            for name in board_store.names(folder):
                board_store.delete(name)
        seconds, _, section = _run(None, "board", collection, {}, workers, tmp, env,
                                   start=lambda: tasks.request_board(collection, ["adjudicated"]))
        stored = board.current(collection, "adjudicated")
        return seconds, section, ({tag: (s.aggregate, {n: list(v) for n, v in s.values.items()})
                                   for tag, s in stored.scores.items()}, stored.meta,
                                  board_extras.stored(collection, "adjudicated", "curves")[0].to_dict("list"))

    _timed(rows, "leaderboard cold (the board job, extras included)", args.repeat, once, "board")


def _checkpoint() -> None:
    """On PostgreSQL, a checkpoint before a timing: the gigabytes of WAL the step before wrote (the import, the
    other layout's run) are flushed then, not by a checkpoint falling in the middle of this one."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("CHECKPOINT")


def _vacuum() -> None:
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM (ANALYZE) pooling_poolentry, pooling_poolprovenance")


def _drain() -> None:
    """Wait until no job is queued or running (the workers are up)."""
    from workbench.models import Job

    while Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).exists():
        time.sleep(0.2)


def _report(job) -> dict:
    from workbench.collections import files as store
    from workbench.jobs import lifecycle as jobs

    with store.open_file(jobs.job_output(job, job.result["file"])) as handle:
        archive = zipfile.ZipFile(io.BytesIO(handle.read()))
    return {n.split("/", 1)[1]: archive.read(n) for n in archive.namelist()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--pool-depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3,
                        help="times each job is timed in each layout, alternating (the table shows the medians)")
    parser.add_argument("--postgres", default="")
    parser.add_argument("--s3", action="store_true")
    parser.add_argument("--jobs", default=",".join(JOBS),
                        help=f"the jobs to time, of {','.join(JOBS)} (the others are done in this process)")
    parser.add_argument("--generated", default="", help="a folder to keep the generated files in (and read again)")
    args = parser.parse_args()
    timed = [j for j in args.jobs.split(",") if j]
    if set(timed) - set(JOBS):
        parser.error(f"--jobs: choose among {', '.join(JOBS)}")
    with tempfile.TemporaryDirectory() as name, ExitStack() as stack:
        tmp = Path(name)
        if args.postgres:
            os.environ["DATABASE_URL"] = args.postgres
        database = stack.enter_context(_database(tmp))
        if not args.postgres:
            os.environ.pop("DATABASE_URL", None)
            database = f"sqlite:///{tmp / 'bench.sqlite3'}"
        if args.s3:
            from tests.s3server import running_s3

            os.environ.update(stack.enter_context(running_s3()).env("bench"))
        _setup(database, tmp / "var")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        rows: list = []
        collection = _imports(tmp, args, env, rows) if "import" in timed else _import(tmp, args)
        _pools(collection, tmp, args, env, rows, timed=("pool" in timed))
        if "evaluation" in timed or "board" in timed:
            _judge(collection, tmp, "p1")
        if "evaluation" in timed:
            _evaluations(collection, tmp, args, env, rows)
        if "board" in timed:
            _boards(collection, tmp, args, env, rows)
        _table(rows, args)


#: the jobs the benchmark times, in the order it runs them
JOBS = ("import", "pool", "evaluation", "board")


def _timed(rows: list, label: str, repeat: int, once, what: str) -> None:
    """Time ``once(workers, attempt)`` -> (seconds, parts' seconds, what it made) ``repeat`` times in each
    layout, the layouts alternating (a slow spell of the shared machine falls on both); the medians go in the
    table, every time in a note. What each made is the same, or the split job ``what`` differs."""
    times, first = {1: [], 2: []}, None
    for attempt in range(repeat):
        for workers in (1, 2):
            seconds, section, found = once(workers, attempt)
            times[workers].append((seconds, section))
            digest = hashlib.sha256(repr(found).encode()).hexdigest()  # a pool's entries: millions of rows
            first = first or digest
            assert digest == first, f"the split {what} differs"
    for workers in (1, 2):
        rows.append((label, workers, *(float(np.median(column)) for column in zip(*times[workers], strict=True))))
    if repeat > 1:
        NOTES.append(f"{label}: " + "; ".join(f"{w} worker{'s' * (w > 1)} " + ", ".join(
            f"{s:.1f} s" for s, _ in times[w]) for w in (1, 2)) + ".")


def _imports(tmp: Path, args, env: dict, rows: list):
    """The import of every run file as one job (``start_runs_import``: staged first, as an upload), into a
    collection of its own with one worker and with two; the same runs each time."""
    from workbench.collections.services import collection_create, topics_import
    from workbench.models import Collection, Run
    from workbench.tasks import start_runs_import

    paths, topics_path = _generated(tmp, args)
    manifest = tmp / "manifest.csv"
    manifest.write_text("tag,team\n" + "".join(f"run{i:03d},team{i // 3}\n" for i in range(len(paths))))

    def once(workers: int, attempt: int):
        collection = collection_create(slug=f"bench{workers}" + (f"-{attempt}" if attempt else ""))
        topics_import(collection=collection, source=topics_path)
        seconds, _, section = _run(None, "runs import", collection, {}, workers, tmp, env,
                                   start=lambda c=collection: start_runs_import(c, paths, manifest=manifest))
        return seconds, section, sorted(Run.objects.filter(collection=collection).values_list(
            "tag", "team", "num_entries", "num_topics", "sha256", "data__table"))

    _timed(rows, f"import of {len(paths):,} run files", args.repeat, once, "import")
    return Collection.objects.get(slug="bench1")


def _pools(collection, tmp: Path, args, env: dict, rows: list, *, timed: bool) -> None:
    """A depth-k pool of every run, built with one worker and with two (the same pool), or in this process."""
    from pooling.models import Pool
    from pooling.selectors import pool_provenance
    from pooling.services import pool_build
    from pooling.tasks import build_pool

    if not timed:
        pool_build(collection=collection, name="p1", strategy="depth", depth=args.pool_depth, seed=1)
        return

    def once(workers: int, attempt: int):
        name = f"p{workers}" + (f"-{attempt}" if attempt else "")
        arguments = {"name": name, "strategy": "depth", "depth": args.pool_depth, "seed": 1}
        seconds, _, section = _run(build_pool, "pool build", collection, {"arguments": arguments}, workers, tmp, env)
        pool = Pool.objects.get(name=name)
        found = (sorted(pool.entries.values_list("topic__qid", "docno", "judging_order")),
                 pool_provenance(pool).to_dict("list"), {k: v for k, v in pool.params.items() if k != "history"})
        if name != "p1":  # each attempt after the first builds beside p1 alone (the entries' table as a track's
            pool.delete()  # with one pool), not beside every pool built before it
            _vacuum()
        return seconds, section, found

    _timed(rows, f"depth-{args.pool_depth} pool build", args.repeat, once, "pool")
    if args.postgres:
        NOTES.append(copy_ceiling(Pool.objects.get(name="p1")))


def _evaluations(collection, tmp: Path, args, env: dict, rows: list) -> None:
    from evaluation.tasks import evaluate_collection

    def once(workers: int, attempt: int):  # cold: no board stored (a stored board is what one worker's report reads)
        seconds, job, section = _run(evaluate_collection, "evaluation", collection,
                                     {"policy": "adjudicated", "measures": ["map", "P.10", "ndcg_cut.10"]},
                                     workers, tmp, env)
        return seconds, section, _report(job)

    _timed(rows, "full evaluation (board + leave-one-out by run and team)", args.repeat, once, "report")


def _table(rows: list, args) -> None:
    lines = args.runs * args.topics * args.depth
    print(f"\n{args.runs} runs x {args.topics} topics x {args.depth} documents ({lines:,} lines) on "
          f"{'PostgreSQL' if args.postgres else 'SQLite'}{' + S3' if args.s3 else ''}; worker peak memory "
          f"{max(PEAKS, default=0) / 1024:,.0f} MiB; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| job | 1 worker | 2 workers | ratio | parts alone (1 worker → 2) | ratio |\n"
          "|---|---:|---:|---:|---:|---:|")
    totals = [0.0, 0.0]
    for label in dict.fromkeys(r[0] for r in rows):
        (one, one_part), (two, two_part) = ((s, p) for r, w, s, p in rows if r == label)
        totals = [totals[0] + one, totals[1] + two]
        print(f"| {label} | {one:.1f} s | {two:.1f} s | {two / one:.2f} | {one_part:.1f} s → {two_part:.1f} s "
              f"| {two_part / one_part:.2f} |")
    if len(rows) > 2:
        print(f"| all of them | {totals[0]:.1f} s | {totals[1]:.1f} s | {totals[1] / totals[0]:.2f} | | |")
    print("\nThe same runs, pool, report and board with one worker and with two, every time: yes")
    for note in NOTES:
        print(f"\n{note}")

if __name__ == "__main__":
    main()
