"""Benchmark: the HTTP API's results endpoints on a real-size track through gunicorn (DEBUG=0, one sync worker).

    .venv/bin/python tests/benchmarks/bench_api.py [--runs 150] [--topics 50] [--depth 1000] [--pool-depth 50]

Builds the track and its board as ``bench_leaderboard_pages.py`` does, makes an organizer's token, and times
with it the leaderboard and the per-topic results of every run (cold: the worker's first request; warm: median
of 5) and one run's per-topic results. Checks that the per-topic values served are the stored board's (every
run, measure and topic). Prints a markdown table; the machine is shared: timings are noisy.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from bench_leaderboard_pages import _children, build_track, serve, setup_django, timed, vm_hwm  # noqa: E402


def call(url: str, token: str, data: bytes | None = None) -> tuple[float, int, bytes]:
    headers = {"Authorization": f"Bearer {token}", **({"Content-Type": "application/json"} if data else {})}
    request = urllib.request.Request(url, data=data, headers=headers)
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as response:  # noqa: S310 - our own server
        body, status = response.read(), response.status
    return time.perf_counter() - start, status, body


def same_as_board(served: dict, collection) -> str:
    """The per-topic values served against the stored board's, every run, measure and topic."""
    from evaluation import board_leaderboard

    stored, _ = board_leaderboard.stored_leaderboard(collection)
    expected = {row["run"]: row["per_topic"] for row in stored.as_dict(per_topic=True)["runs"]}
    got = {row["run"]: row["per_topic"] for row in served["runs"]}
    values = sum(len(v) for topics in got.values() for v in topics.values())
    return f"equal ({values:,} values)" if got == expected else "DIFFERS from the stored board"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--pool-depth", type=int, default=50)
    args = parser.parse_args()
    rows, failures = [], []
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        env = setup_django(tmp / "var")
        seconds, (collection, _, _, judged) = timed(lambda: build_track(tmp, args))
        rows.append((f"build the track: {args.runs} runs x {args.topics} topics, {judged:,} judgments", f"{seconds:.1f} s"))
        from django.contrib.auth.models import Group, User

        from evaluation import board
        from judging.policies import DEFAULT_POLICY
        from workbench.access.tokens import token_create

        seconds, _ = timed(lambda: board.build(collection, DEFAULT_POLICY))
        rows.append(("board job (what a change to the judgments queues)", f"{seconds:.1f} s"))
        user = User.objects.create_user("bench-organizer", password="pw")
        user.groups.add(Group.objects.get_or_create(name="organizers")[0])
        token = token_create(user=user, name="bench")[1]
        web, url = serve(env, tmp / "gunicorn.log")
        api = f"{url}/api/v1/collections/bench"
        try:
            worker = _children(web.pid)[0]
            for label, path in (("leaderboard", "/leaderboard"), ("per-topic results, every run", "/results")):
                cold, status, body = call(api + path, token)
                if status != 200:
                    failures.append(f"{path} answered {status}")
                warm = statistics.median(call(api + path, token)[0] for _ in range(5))
                rows.append((f"**{label}** ({len(body) / 2**20:.1f} MiB)", f"cold {cold:.2f} s, warm {warm:.2f} s"))
            check = same_as_board(json.loads(body), collection)
            rows.append(("per-topic values served vs the stored board", check))
            if check.startswith("DIFFERS"):
                failures.append(check)
            one = statistics.median(call(api + "/results?runs=run000", token)[0] for _ in range(5))
            rows.append(("per-topic results, one run (median of 5)", f"{one * 1000:.0f} ms"))
            rows.append(("web worker peak memory (VmHWM)", f"{vm_hwm(worker) / 2**20:,.0f} MiB"))
        finally:
            web.send_signal(signal.SIGTERM)
            web.wait(timeout=30)
    print(f"| {args.runs} runs, API | |\n|---|---:|")
    for label, value in rows:
        print(f"| {label} | {value} |")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
