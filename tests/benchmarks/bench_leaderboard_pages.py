"""Benchmark: the results pages of a real-size track through gunicorn (DEBUG=0, one sync worker).

    .venv/bin/python tests/benchmarks/bench_leaderboard_pages.py [--runs 150] [--topics 50] [--depth 1000]
        [--pool-depth 100] [--keep DIR] [--no-pages] [--s3]

Generates a track as ``bench_evaluation.py`` does (seeded; two thirds of the runs contribute), builds a
depth-``--pool-depth`` pool of the contributing runs and judges all of it (binary, 30% relevant), imports
everything with the services into a fresh SQLite database, then:

* computes the board (``evaluation.board.build``: what the background job does when judgments change);
* checks the board against ``manage.py trec_eval`` (several run files in one call) for 5 runs, every
  base measure, every topic and "all";
* starts gunicorn (one worker, DEBUG=0) and, logged in as an organizer, times the leaderboard cold (the
  worker's first request: the board is read from disk) and warm (median of 5), then (unless ``--no-pages``)
  each other results page cold (run, topic, significance, curves, reusability: a fresh worker per page);
* reads the worker's peak resident memory (VmHWM).

With ``--s3`` the files, the board among them, live in an S3 bucket (SeaweedFS on 127.0.0.1, started by the
script): every gunicorn gets a ``BOARD_DIR`` of its own, empty, so "cold" includes fetching the board and the
page's figures from the bucket.

Prints a markdown table. The machine is shared: timings are noisy.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from bench_evaluation import generate  # noqa: E402

from tests.browser.stack import _free_port  # noqa: E402


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def vm_hwm(pid: int) -> int:
    """Peak resident memory (bytes) of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def setup_django(var: Path, database_url: str | None = None) -> dict:
    """Django on ``database_url`` (default: a SQLite file in ``var``), migrated; the environment for gunicorn."""
    env = {**os.environ, "WORKBENCH_VAR_DIR": str(var), "DEBUG": "0", "SECRET_KEY": "bench-" + "x" * 50,
           "ALLOWED_HOSTS": "127.0.0.1,localhost",
           "DATABASE_URL": database_url or f"sqlite:///{var / 'bench.sqlite3'}",
           "DJANGO_SETTINGS_MODULE": "workbench.settings", "PYTHONUNBUFFERED": "1"}
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return env


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def build_track(tmp: Path, args) -> object:
    from judging.services import qrels_import
    from pooling.services import pool_build
    from pooling.strategies import ranked_entries
    from workbench.collections.selectors import run_frames
    from workbench.collections.services import RunSpec, collection_create, runs_import, topics_import

    paths, topics_path, qrels_path = generate(tmp, args.runs, args.topics, args.depth)
    collection = collection_create(slug="bench")
    topics_import(collection=collection, source=topics_path)
    contributing = int(args.runs * 2 / 3)
    runs_import(collection=collection, specs=[RunSpec(source=p, team=f"team{i // 3}", contributes=i < contributing)
                                              for i, p in enumerate(paths)])
    pool_build(collection=collection, depth=args.pool_depth)
    ranked = ranked_entries(run_frames(collection, contributing_only=True), args.pool_depth)
    ranked = ranked[["qid", "docno"]].drop_duplicates()
    rng = np.random.default_rng(3)
    with open(qrels_path, "w") as out:
        for qid, docno in zip(ranked["qid"], ranked["docno"], strict=True):
            out.write(f"{qid} 0 {docno} {int(rng.random() < 0.3)}\n")
    summary = qrels_import(collection=collection, source=qrels_path, assessor="nist")
    return collection, paths, qrels_path, summary.created


def check_against_trec_eval(path: Path, paths: list[Path], qrels_path: Path, env: dict) -> str:
    """The board against ``manage.py trec_eval -q`` on 5 run files: the number of values compared, or a
    difference."""
    from evaluation import board

    stored = board.read(path)
    chosen = paths[:3] + paths[-2:]
    args = [a for r in stored.requests for a in ("-m", r)]
    done = subprocess.run([sys.executable, "manage.py", "trec_eval", "-q", "-M", "1000", *args, str(qrels_path),
                           *map(str, chosen)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return f"trec_eval failed: {done.stderr.strip()[-300:]}"
    compared, tags, tag = 0, [p.stem for p in chosen], None
    for line in done.stdout.splitlines():
        name, qid, value = line.split()
        if name == "runid":
            tag = value
            continue
        if name == "relstring" or tag is None:
            continue
        scores = stored.scores[tag]
        mine = scores.aggregate[name] if qid == "all" else scores.column(name, [qid])[0]
        if abs(float(mine) - float(value)) > 5.01e-5:  # trec_eval prints 4 decimals
            return f"DIFFERS: {tag} {name} {qid}: board {mine} trec_eval {value}"
        compared += 1
    return f"equal ({compared:,} values of {len(tags)} runs)"


def check_stored_figures(collection) -> str:
    """The figures the board job stored against those computed as a request did before: 5 runs' curves of
    every kind (engine.curves, run by run) and leave-one-run-out of MAP."""
    import pandas as pd

    from evaluation import cache, curves, reusability, selectors

    tags = list(collection.runs.order_by("tag").values_list("tag", flat=True))
    chosen = tags[:3] + tags[-2:]
    for kind in ("pr", "interpolated", "roc"):
        stored = curves.run_curves(collection, chosen, kind=kind)
        computed = curves._compute(collection, chosen, kind, None, "adjudicated", None)
        if not stored.equals(computed):
            return f"DIFFERS: the stored {kind} curves"
    stored = selectors.leave_one_out(collection).table
    cache.clear_caches()
    computed = reusability.compute_leave_one_out(collection).table
    try:
        pd.testing.assert_frame_equal(stored, computed)
    except AssertionError:
        return "DIFFERS: the stored leave-one-run-out"
    return f"equal (curves of {len(chosen)} runs, leave-one-run-out of {len(stored)} contributing runs)"


def session_cookie(username: str) -> str:
    """A logged-in session of ``username`` (made in the database, as a login would), as a Cookie header."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore

    user = User.objects.get(username=username)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return f"sessionid={session.session_key}"


def organizer_cookie() -> str:
    from django.contrib.auth.models import Group, User

    user = User.objects.filter(username="bench-organizer").first() or \
        User.objects.create_user("bench-organizer", password="pw")
    user.groups.add(Group.objects.get_or_create(name="organizers")[0])
    return session_cookie(user.username)


def fetch(url: str, cookie: str) -> tuple[float, int, bytes]:
    """(seconds, status, body) of a GET, an error status included."""
    request = urllib.request.Request(url, headers={"Cookie": cookie})
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=600) as response:  # noqa: S310 - our own server
            body, status = response.read(), response.status
    except urllib.error.HTTPError as exc:
        body, status = exc.read(), exc.code
    return time.perf_counter() - start, status, body


def get(url: str, cookie: str) -> tuple[float, int, int]:
    seconds, status, body = fetch(url, cookie)
    return seconds, status, len(body)


def serve(env: dict, log: Path):
    if env.get("S3_BUCKET"):  # a web process on another machine: nothing of the boards on its disk yet
        env = {**env, "BOARD_DIR": tempfile.mkdtemp(prefix="web-boards-", dir=log.parent)}
    port = _free_port()
    out = open(log, "w")  # noqa: SIM115 - closed with the server
    web = subprocess.Popen([str(ROOT / ".venv" / "bin" / "gunicorn"), "--workers", "1", "--bind",
                            f"127.0.0.1:{port}", "--timeout", "600", "workbench.wsgi"], cwd=ROOT, env=env,
                           stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/accounts/login/", timeout=2)  # noqa: S310
            return web, url
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer:\n{log.read_text()[-2000:]}")


#: every results page but the leaderboard, as an organizer first opens it (label, path under the collection)
PAGES = (("run page", "runs/run000/"), ("topic page", "topics/1/"), ("significance", "significance/"),
         ("curves (5 runs, 11-point)", "curves/?run=run000&run=run001&run=run002&run=run003&run=run004"),
         ("curves, one topic (5 runs, not interpolated)", "curves/?kind=pr&topic=1"),
         ("reusability (leave one run out, MAP)", "reusability/"),
         ("reusability (leave one team out, MAP)", "reusability/?by=team"))


def time_pages(env: dict, tmp: Path, cookie: str, failures: list[str]) -> list[tuple[str, str]]:
    """Each page cold: a fresh gunicorn worker per page, its first request timed, and the worker's peak memory
    after it."""
    rows = []
    for label, suffix in PAGES:
        web, url = serve(env, tmp / "gunicorn.log")
        try:
            worker = _children(web.pid)[0]
            request = urllib.request.Request(f"{url}/collections/bench/{suffix}", headers={"Cookie": cookie})
            start = time.perf_counter()
            with urllib.request.urlopen(request, timeout=600) as response:  # noqa: S310 - our own server
                body, status = response.read(), response.status
            seconds = time.perf_counter() - start
            if status != 200 or b"being computed" in body:
                failures.append(f"{label} answered {status}{' (being computed)' if status == 200 else ''}")
            rows.append((f"**{label}** cold (fresh worker; {len(body) / 1024:,.0f} KiB)",
                         f"{seconds:.2f} s, worker peak {vm_hwm(worker) / 2**20:,.0f} MiB"))
        finally:
            web.send_signal(signal.SIGTERM)
            web.wait(timeout=30)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--pool-depth", type=int, default=50)
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep the track in this folder and reuse it when the script runs again")
    parser.add_argument("--pages", action=argparse.BooleanOptionalAction, default=True,
                        help="also time every other results page, cold (default; --no-pages skips them)")
    parser.add_argument("--s3", action="store_true",
                        help="files (and boards) in a bucket of a SeaweedFS started here; each web process cold")
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    failures = []
    with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as stack:
        if args.s3:
            from tests.s3server import running_s3

            os.environ.update(stack.enter_context(running_s3()).env("bench"))
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        kept = (tmp / "var" / "bench.sqlite3").exists()
        env = setup_django(tmp / "var")
        if kept:
            from judging.models import Judgment
            from workbench.models import Collection

            collection = Collection.objects.get(slug="bench")
            paths, qrels_path = sorted(tmp.glob("run*.txt")), tmp / "qrels.txt"
            judged = Judgment.objects.filter(collection=collection).count()
            seconds = 0.0
        else:
            seconds, (collection, paths, qrels_path, judged) = timed(lambda: build_track(tmp, args))
        rows.append((f"build the track: {args.runs} runs x {args.topics} topics x {args.depth} documents, "
                     f"{judged:,} judgments", f"{seconds:.1f} s"))
        from evaluation import board
        from judging.policies import DEFAULT_POLICY

        shutil.rmtree(board.board_dir(), ignore_errors=True)  # a kept track's old boards: compute anew
        marks = [time.perf_counter()]
        seconds, path = timed(lambda: board.build(collection, DEFAULT_POLICY, step=lambda text: marks.append(
            time.perf_counter()) if text == "the qrels" else None))
        scored = marks[-1] - marks[0] if len(marks) > 1 else seconds
        rows.append(("board job: rank, score, write the board", f"{scored:.1f} s"))
        rows.append(("board job: the other pages' figures (qrels, topic depths, recall, curves, leave-one-run/team-out)",
                     f"{seconds - scored:.1f} s"))
        extras = sum(p.stat().st_size for p in path.parent.glob("extras/*.parquet"))
        rows.append(("board file size (+ the other pages' figures)",
                     f"{path.stat().st_size / 2**20:.1f} MiB (+ {extras / 2**20:.1f} MiB)"))
        check = check_against_trec_eval(path, paths, qrels_path, env)
        rows.append(("board vs `manage.py trec_eval -q`", check))
        if check.startswith(("DIFFERS", "trec_eval failed")):
            failures.append(check)
        stored = check_stored_figures(collection)
        rows.append(("stored figures vs computed in the request", stored))
        if stored.startswith("DIFFERS"):
            failures.append(stored)
        cookie = organizer_cookie()
        web, url = serve(env, tmp / "gunicorn.log")
        try:
            worker = _children(web.pid)[0]
            page = f"{url}/collections/bench/leaderboard/"
            cold, status, size = get(page, cookie)
            if status != 200 or size < 10_000:
                failures.append(f"leaderboard answered {status} ({size} bytes)")
            rows.append((f"**leaderboard cold** (worker's first request; {size / 1024:.0f} KiB)", f"{cold:.2f} s"))
            warm = statistics.median(get(page, cookie)[0] for _ in range(5))
            rows.append(("**leaderboard warm** (median of 5)", f"{warm * 1000:.0f} ms"))
            rows.append(("**web worker peak memory after the leaderboard (VmHWM)**",
                         f"{vm_hwm(worker) / 2**20:,.0f} MiB"))
        finally:
            web.send_signal(signal.SIGTERM)
            web.wait(timeout=30)
        if args.pages:
            rows += time_pages(env, tmp, cookie, failures)
    print(f"| {args.runs} runs | |\n|---|---:|")
    for label, value in rows:
        print(f"| {label} | {value} |")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
