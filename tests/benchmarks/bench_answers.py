"""Benchmark: an answer track of 100 answer runs x 50 topics x 20 nuggets (import, pool, scores) against a
ranked track of the same number of lines.

"The same number of lines": the answer track's unit of judging is an (answer, nugget) pair, 100 x 50 x 20 =
100,000 of them, as a ranked track's is a run line; so the ranked track has 100 runs x 50 topics x 20 documents
= 100,000 run lines, judged with qrels of its depth-20 pool. Each step is a fresh `manage.py` process on one
SQLite database per track (`--postgres URL` for PostgreSQL); wall time and peak RSS of the whole process.

Run: .venv/bin/python tests/benchmarks/bench_answers.py [--runs 100] [--topics 50] [--nuggets 20] [--keep DIR]
Prints a markdown table. ``--keep DIR`` leaves the generated files and both SQLite databases in DIR (which must
not exist), to profile a step in one process on the same data.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.answers.generated import write_track  # noqa: E402
from tests.benchmarks.bench_import import peak_rss_mb_of, timed  # noqa: E402


def _ranked_files(tmp: Path, runs: int, topics: int, depth: int) -> tuple[list[Path], Path]:
    rng = random.Random(5)
    folder = tmp / "ranked"
    folder.mkdir()
    paths = []
    for r in range(runs):
        lines = []
        for q in range(1, topics + 1):
            docs = rng.sample(range(400), depth)
            lines += [f"{q} Q0 seg-{q}-{d} {k + 1} {100 - k}.0 run{r:03d}\n" for k, d in enumerate(docs)]
        path = folder / f"run{r:03d}.txt"
        path.write_text("".join(lines))
        paths.append(path)
    qrels = tmp / "ranked.qrels"
    qrels.write_text("".join(f"{q} 0 seg-{q}-{d} {rng.choice([0, 0, 1])}\n"
                             for q in range(1, topics + 1) for d in range(400)))
    return paths, qrels


def _env(tmp: Path, name: str, postgres: str | None) -> dict:
    env = {"PATH": os.environ["PATH"], "DEBUG": "1", "WORKBENCH_VAR_DIR": str(tmp / f"var-{name}")}
    if postgres:
        env["DATABASE_URL"] = postgres
    py = sys.executable
    timed([py, "manage.py", "migrate", "-v0"], env)
    subprocess.run([py, "manage.py", "flush", "--noinput"], cwd=ROOT, env=env, check=True)
    return env


def _steps(env: dict, steps: list[tuple[str, list[str]]]) -> list[tuple[str, float, float]]:
    rows = []
    for label, args in steps:
        try:
            elapsed, peak = peak_rss_mb_of([sys.executable, "manage.py", *args], env)
        except subprocess.CalledProcessError as exc:
            raise SystemExit(f"manage.py {' '.join(args[:2])} failed:\n{exc.stderr}") from None
        rows.append((label, elapsed, peak))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--nuggets", type=int, default=20)
    parser.add_argument("--postgres", default=None, help="a DATABASE_URL of a scratch PostgreSQL database")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="copy the generated files and databases to DIR (a new folder) at the end")
    opts = parser.parse_args()
    if opts.keep is not None and opts.keep.exists():
        parser.error(f"--keep {opts.keep}: exists already")
    qids = [str(q) for q in range(1, opts.topics + 1)]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        topics = tmp / "topics.tsv"
        topics.write_text("".join(f"{q}\tquestion {q}\n" for q in qids))
        track = write_track(tmp / "answers", runs=opts.runs, qids=qids, nuggets=opts.nuggets)
        pairs = sum(len(r["nuggets"]) for r in track["records"])
        env = _env(tmp, "answers", opts.postgres)
        _steps(env, [("", ["create_collection", "bench"]), ("", ["import_topics", "bench", str(topics)])])
        answers = _steps(env, [
            ("process start-up alone (show_collection)", ["show_collection", "bench"]),
            (f"import_answers ({opts.runs} files, {opts.runs * opts.topics:,} answers)",
             ["import_answers", "bench", *map(str, track["answers"])]),
            ("import_nuggets", ["import_nuggets", "bench", str(track["banks"])]),
            (f"import_assignments ({pairs:,} answer x nugget pairs)",
             ["import_assignments", "bench", str(track["assignments"]), "--assessor", "nist"]),
            ("build_answer_pools (cited, nugget, support)", ["build_answer_pools", "bench"]),
            ("answer_scores --format json", ["answer_scores", "bench", "--format", "json"]),
        ])
        runs, qrels = _ranked_files(tmp, opts.runs, opts.topics, opts.nuggets)
        env = _env(tmp, "ranked", opts.postgres)
        _steps(env, [("", ["create_collection", "bench"]), ("", ["import_topics", "bench", str(topics)])])
        ranked = _steps(env, [
            ("process start-up alone (show_collection)", ["show_collection", "bench"]),
            (f"import_runs ({opts.runs} files, {opts.runs * opts.topics * opts.nuggets:,} lines)",
             ["import_runs", "bench", *map(str, runs)]),
            ("import_qrels", ["import_qrels", "bench", str(qrels)]),
            (f"build_pool --depth {opts.nuggets}", ["build_pool", "bench", "--depth", str(opts.nuggets)]),
            ("evaluate -m map -m ndcg_cut.10 --format json",
             ["evaluate", "bench", "-m", "map", "-m", "ndcg_cut.10", "--format", "json"]),
        ])
        if opts.keep is not None:
            shutil.copytree(tmp, opts.keep)
    print("| track | step | wall (s) | peak RSS (MB) |\n|---|---|---:|---:|")
    for name, rows in (("answers", answers), ("ranked", ranked)):
        for label, elapsed, peak in rows:
            print(f"| {name} | {label} | {elapsed:.2f} | {peak:.0f} |")
        print(f"| {name} | **total** | **{sum(r[1] for r in rows):.2f}** | **{max(r[2] for r in rows):.0f}** |")


if __name__ == "__main__":
    main()
