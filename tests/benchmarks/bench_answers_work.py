"""Benchmark: the work of each step of bench_answers.py, without process start-up, one process a track.

bench_answers.py times each step as a fresh ``manage.py`` process, start-up included (about 1.8 s each on a quiet
machine, more than most steps' work): on a loaded machine the step's own work drowns in the start-up's noise.
Here each track (answers, ranked) runs in one process of its own, Django and numpy/pandas/pyarrow loaded first,
each step a ``call_command`` timed alone, on the same generated files (``--profile STEP`` prints its cProfile).

Run: .venv/bin/python tests/benchmarks/bench_answers_work.py [--runs 100] [--topics 50] [--nuggets 20]
     [--repeat 2] [--profile import_assignments]
Prints a markdown table: each step's least time over the repeats, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TRACKS = {"answers": ["import_answers", "import_nuggets", "import_assignments", "build_answer_pools", "answer_scores"],
          "ranked": ["import_runs", "import_qrels", "build_pool", "evaluate"]}


def _one_track(track: str, opts) -> dict[str, float]:
    """In this process: a fresh SQLite database, the generated files, each step timed."""
    import cProfile
    import io
    import pstats
    import tempfile
    import time

    tmp = Path(tempfile.mkdtemp(prefix="bench_answers_work_"))
    os.environ.update({"DEBUG": "1", "WORKBENCH_VAR_DIR": str(tmp / "var"),
                       "DJANGO_SETTINGS_MODULE": "workbench.settings"})
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    import numpy  # noqa: F401  (loaded before the clock, in both tracks)
    import pandas  # noqa: F401
    import pyarrow.compute  # noqa: F401
    import pyarrow.csv  # noqa: F401
    import pyarrow.json  # noqa: F401
    from django.core.management import call_command

    from tests.answers.generated import write_track
    from tests.benchmarks.bench_answers import _ranked_files

    qids = [str(q) for q in range(1, opts.topics + 1)]
    topics = tmp / "topics.tsv"
    topics.write_text("".join(f"{q}\tquestion {q}\n" for q in qids))
    if track == "answers":
        files = write_track(tmp / "answers", runs=opts.runs, qids=qids, nuggets=opts.nuggets)
        steps = [["import_answers", "bench", *map(str, files["answers"])],
                 ["import_nuggets", "bench", str(files["banks"])],
                 ["import_assignments", "bench", str(files["assignments"]), "--assessor", "nist"],
                 ["build_answer_pools", "bench"], ["answer_scores", "bench", "--format", "json"]]
    else:
        runs, qrels = _ranked_files(tmp, opts.runs, opts.topics, opts.nuggets)
        steps = [["import_runs", "bench", *map(str, runs)], ["import_qrels", "bench", str(qrels)],
                 ["build_pool", "bench", "--depth", str(opts.nuggets)],
                 ["evaluate", "bench", "-m", "map", "-m", "ndcg_cut.10", "--format", "json"]]
    out = io.StringIO()
    call_command("migrate", verbosity=0)
    call_command("create_collection", "bench", stdout=out)
    call_command("import_topics", "bench", str(topics), stdout=out)
    times = {}
    for args in steps:
        profile = cProfile.Profile() if args[0] == opts.profile else None
        start = time.perf_counter()
        if profile:
            profile.enable()
        call_command(*args, stdout=out, stderr=out)
        if profile:
            profile.disable()
            pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
        times[args[0]] = time.perf_counter() - start
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--nuggets", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--profile", default=None, metavar="STEP", help="cProfile this step (to stderr)")
    parser.add_argument("--track", choices=list(TRACKS), default=None, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.track:  # one track, in this process
        print(json.dumps(_one_track(opts.track, opts)))
        return
    best: dict[str, dict[str, float]] = {track: {} for track in TRACKS}
    loads = []
    for _ in range(opts.repeat):
        for track in TRACKS:  # alternating, so that both see the same load
            loads.append(os.getloadavg()[0])
            args = [sys.executable, __file__, "--track", track, "--runs", str(opts.runs), "--topics",
                    str(opts.topics), "--nuggets", str(opts.nuggets)] + (["--profile", opts.profile]
                                                                         if opts.profile else [])
            result = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
            if result.returncode:
                raise SystemExit(result.stderr)
            sys.stderr.write(result.stderr)
            for step, seconds in json.loads(result.stdout.strip().splitlines()[-1]).items():
                best[track][step] = min(seconds, best[track].get(step, seconds))
    print(f"load average (1 min) at each track's start: {', '.join(f'{load:.1f}' for load in loads)}\n")
    print("| track | step | work (s) |\n|---|---|---:|")
    for track, steps in best.items():
        for step in TRACKS[track]:
            print(f"| {track} | `{step}` | {steps[step]:.2f} |")
        print(f"| {track} | **total** | **{sum(steps.values()):.2f}** |")


if __name__ == "__main__":
    main()
