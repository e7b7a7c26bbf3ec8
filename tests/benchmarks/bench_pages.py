"""Benchmark: every results page of a generated TREC-size track, cold and warm, through gunicorn (DEBUG=0, one
sync worker); then judging latency with 20 assessors while 150 runs are imported (``judging_during_import.py``).

    .venv/bin/python tests/benchmarks/bench_pages.py [--runs 143] [--topics 30] [--depth 1000] [--pool-depth 7]
        [--warm 5] [--keep DIR] [--no-judging] [--databases sqlite,postgres] [--page-database sqlite|postgres]

The track is generated as ``bench_leaderboard_pages.py`` builds it (seeded; two thirds of the runs contribute;
the pool judged, 30% relevant, by an imported qrels), plus what the other pages need: a participation track
with one team owning three runs, results released (participant results), and a machine judge whose imported
labels disagree with the humans on 20% of the pairs (machine agreement). The board job runs once
(``evaluation.board.build``), as it does after the imports. Then, logged in as an organizer (a participant for
the participant page), each page is timed:

* **cold**: a fresh gunicorn worker per page, its first request (the worker's imports, the board read from disk);
* **warm**: the median of ``--warm`` further requests of that worker.

The pages run on a SQLite file (default) or, with ``--page-database postgres``, on a fresh PostgreSQL database
``h_pages_bench`` on 127.0.0.1:5432 (dropped and created at the start; ``--keep`` is SQLite only).

Targets (issue 40): cold <= 1 s, warm <= 300 ms. The judging part (skipped by ``--no-judging``) prints p50/p95
of a judgment post and of the next document's page, before and during the import, on each database.
The machine is shared: timings are noisy; the load average is printed with the table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from bench_leaderboard_pages import (  # noqa: E402
    build_track,
    fetch,
    organizer_cookie,
    serve,
    session_cookie,
    setup_django,
    timed,
)

#: (label, URL path, who asks): every results page of issue 40
PAGES = (("leaderboard", "/collections/bench/leaderboard/", "organizer"),
         ("significance", "/collections/bench/significance/", "organizer"),
         ("curves (first visit)", "/collections/bench/curves/", "organizer"),
         ("curves, one topic", "/collections/bench/curves/?kind=pr&topic=1", "organizer"),
         ("machine agreement", "/judge/organize/bench/machine/flippy/agreement/", "organizer"),
         ("participant results", "/participate/bench/results/", "participant"),
         ("run page", "/collections/bench/runs/run000/", "organizer"),
         ("topic page", "/collections/bench/topics/1/", "organizer"),
         ("budget", "/collections/bench/budget/", "organizer"),
         ("pool page", "/collections/bench/pool/", "organizer"))

COLD_TARGET, WARM_TARGET = 1.0, 0.3
#: the pages' PostgreSQL database (``--page-database postgres``), made afresh each time
POSTGRES_NAME = "h_pages_bench"
POSTGRES_URL = f"postgres://postgres@127.0.0.1:5432/{POSTGRES_NAME}"


def fresh_postgres() -> str:
    """Drop and create the pages' PostgreSQL database; its URL."""
    for sql in (f"drop database if exists {POSTGRES_NAME} with (force)", f"create database {POSTGRES_NAME}"):
        subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc", sql], check=True,
                       capture_output=True)
    return POSTGRES_URL


def add_participation(collection) -> None:
    """A track with results released and a team (one participant) owning runs run000..run002."""
    from django.contrib.auth.models import Group, User

    from participation.models import Submission, Team, Track

    track = Track.objects.create(collection=collection, results_released=True, leaderboard=Track.Leaderboard.ANONYMOUS)
    user = User.objects.create_user("bench-participant", password="pw")
    user.groups.add(Group.objects.get_or_create(name="participants")[0])
    team = Team.objects.create(track=track, name="team0")
    team.members.add(user)
    for i, run in enumerate(collection.runs.filter(tag__in=["run000", "run001", "run002"]).order_by("tag")):
        Submission.objects.create(team=team, submitted_by=user, file_name=f"{run.tag}.txt", stored="-", sha256="0" * 64,
                                  tag=run.tag, status=Submission.Status.ACCEPTED, priority=i + 1, run=run)


def add_machine_judge(collection, qrels_path: Path, tmp: Path) -> int:
    """A machine judge's labels: the humans' qrels with a fifth of the grades flipped (seeded)."""
    import numpy as np

    from judging.machine_import import machine_labels_import

    rng = np.random.default_rng(5)
    lines = []
    for line in qrels_path.read_text().splitlines():
        qid, it, docno, rel = line.split()
        lines.append(f"{qid} {it} {docno} {1 - int(rel) if rng.random() < 0.2 else rel}\n")
    (tmp / "machine.qrels").write_text("".join(lines))
    return machine_labels_import(collection=collection, source=tmp / "machine.qrels", judge="flippy").recorded


def time_page(env: dict, tmp: Path, path: str, cookie: str, warm: int) -> tuple[float, list[float], int, bytes]:
    """(cold seconds, warm seconds, status, body) of one page on a fresh gunicorn worker."""
    web, url = serve(env, tmp / "gunicorn.log")
    try:
        cold, status, body = fetch(url + path, cookie)
        warms = [fetch(url + path, cookie)[0] for _ in range(warm)]
    finally:
        web.send_signal(signal.SIGTERM)
        web.wait(timeout=30)
    return cold, warms, status, body


def time_pages(env: dict, tmp: Path, cookies: dict, warm: int, failures: list[str]) -> list[str]:
    lines = ["| page | cold | warm (median) | warm (max) | size | target |", "|---|---:|---:|---:|---:|---|"]
    for label, path, who in PAGES:
        cold, warms, status, body = time_page(env, tmp, path, cookies[who], warm)
        median = statistics.median(warms) if warms else float("nan")
        met = cold <= COLD_TARGET and median <= WARM_TARGET
        if status != 200 or b"being computed" in body:
            failures.append(f"{label} answered {status}{' (being computed)' if status == 200 else ''}")
        lines.append(f"| {label} | {cold:.2f} s | {median * 1000:.0f} ms | {max(warms, default=0) * 1000:.0f} ms | "
                     f"{len(body) / 1024:,.0f} KiB | {'met' if met else '**missed**'} |")
    return lines


def prepare(tmp: Path, args) -> tuple[dict, list[str]]:
    """The track, its extras and its board; (environment, table rows of what it took)."""
    rows = []
    postgres = args.page_database == "postgres"
    kept = not postgres and (tmp / "var" / "bench.sqlite3").exists()
    env = setup_django(tmp / "var", fresh_postgres() if postgres else None)
    from workbench.models import Collection

    if kept:
        collection = Collection.objects.get(slug="bench")
    else:
        seconds, (collection, _, qrels_path, judged) = timed(lambda: build_track(tmp, args))
        rows.append(f"| build the track ({args.runs} runs x {args.topics} topics x {args.depth}, pool depth "
                    f"{args.pool_depth}, {judged:,} judgments) | {seconds:.1f} s |")
        add_participation(collection)
        seconds, labels = timed(lambda: add_machine_judge(collection, qrels_path, tmp))
        rows.append(f"| a machine judge's {labels:,} labels imported | {seconds:.1f} s |")
    organizer_cookie()  # the organizer (created once)
    from evaluation import board
    from judging.policies import DEFAULT_POLICY

    shutil.rmtree(board.board_dir(), ignore_errors=True)
    seconds, _ = timed(lambda: board.build(collection, DEFAULT_POLICY))
    rows.append(f"| board job (everything it stores) | {seconds:.1f} s |")
    seconds, _ = timed(lambda: machine_agreements(collection))
    rows.append(f"| the machine judge's agreement (a job the board job queues) | {seconds:.1f} s |")
    return env, rows


def database_label(url: str) -> str:
    """The database the pages run on: "SQLite (file)" or "PostgreSQL version (database)"."""
    from django.db import connection

    if connection.vendor == "postgresql":
        return f"PostgreSQL {connection.pg_version // 10000} ({url.rsplit('/', 1)[-1]})"
    return f"SQLite ({url.removeprefix('sqlite:///')})"


def machine_agreements(collection) -> None:
    """What the board job queues after the boards, run here: each machine judge's agreement with the humans."""
    from evaluation import tasks
    from judging.machine_agreement import KIND
    from judging.tasks import machine_agreement_job
    from workbench.models import Job

    tasks._machine_agreements(collection)
    for job in Job.objects.filter(collection=collection, kind=KIND, status=Job.Status.QUEUED):
        machine_agreement_job.call(job.pk)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=143)
    parser.add_argument("--topics", type=int, default=30)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--pool-depth", type=int, default=7)
    parser.add_argument("--warm", type=int, default=5, help="warm requests per page (their median is shown)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the track here and reuse it next time")
    parser.add_argument("--judging", action=argparse.BooleanOptionalAction, default=True,
                        help="also time judging during a 150-run import (default; --no-judging skips it)")
    parser.add_argument("--databases", default="sqlite,postgres", help="for the judging part")
    parser.add_argument("--page-database", choices=["sqlite", "postgres"], default="sqlite",
                        help=f"the database the pages run on (postgres: {POSTGRES_URL}, made afresh)")
    args = parser.parse_args()
    if args.keep and args.page_database == "postgres":
        parser.error("--keep keeps a SQLite track only; drop it with --page-database postgres")
    failures: list[str] = []
    print(f"load average (1 min) before: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        env, rows = prepare(tmp, args)
        cookies = {"organizer": session_cookie("bench-organizer"), "participant": session_cookie("bench-participant")}
        print(f"| {args.runs} runs x {args.topics} topics | |\n|---|---:|\n" + "\n".join(rows), flush=True)
        print(f"\npages on {database_label(env['DATABASE_URL'])}", flush=True)
        print("\n" + "\n".join(time_pages(env, tmp, cookies, args.warm, failures)), flush=True)
    print(f"load average after pages: {os.getloadavg()[0]:.2f}", flush=True)
    if args.judging:
        from judging_during_import import judging_during_import

        for database in args.databases.split(","):
            failures += judging_during_import(database)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
