"""Benchmark the evaluation engine against pytrec_eval-terrier and ranx on the same generated files.

    DEBUG=1 .venv/bin/python tests/benchmarks/bench_engine.py [--workdir var/bench] [--only a|b]

Workloads (issue 3):

(a) one run of 5,000 topics x 1,000 documents, 50 graded judgments (0-3) per topic, measures map, ndcg,
    ndcg_cut.10, P.10, recall.1000: parse + evaluate. Cases: the whole ``manage.py trec_eval`` process;
    the engine in-process (the array readers ``read_qrels_table`` / ``read_run_arrays`` + Evaluator,
    the command line's path); pytrec_eval (its ``parse_qrel`` /
    ``parse_run`` + ``RelevanceEvaluator``); ranx (``Qrels.from_file`` / ``Run.from_file`` + ``evaluate``).
(b) 100 runs x 50 topics x 1,000 documents, evaluated in one batch (engine: ``evaluate_many``; the
    others: one evaluator, a loop over runs).

(c) against NIST's trec_eval C binary (issue 15): workload (a) as a whole process each, and ``-q -m all_trec``
    on its first 500 topics. The binary is ``--trec-eval PATH`` (or ``$TREC_EVAL``), or is built with ``make``
    from a checkout of https://github.com/usnistgov/trec_eval given as ``--trec-eval-src DIR`` (or
    ``$TREC_EVAL_SRC``); with neither, or no C compiler, these rows are skipped with a notice. Targets: the
    whole ``manage.py trec_eval`` process at most 0.33x trec_eval's time with no more peak memory, and no
    slower than trec_eval for ``-q -m all_trec``; the outputs are compared byte for byte.

Every case runs in its own subprocess; wall time and peak RSS (``ru_maxrss`` of that child) are measured
from outside, the in-process parse / evaluate split from inside. Prints a markdown table. The machine is
shared: compare ratios measured in the same run. Files are generated once (seeded) under ``--workdir``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
MEASURES_TE = ["map", "ndcg", "ndcg_cut.10", "P.10", "recall.1000"]
MEASURES_PTE = {"map", "ndcg", "ndcg_cut.10", "P.10", "recall.1000"}
MEASURES_RANX = ["map", "ndcg", "ndcg@10", "precision@10", "recall@1000"]


# -- data ------------------------------------------------------------------------------------------
def write_qrels(path: Path, n_topics: int, per_topic: int, rng, corpus: int) -> list[np.ndarray]:
    judged = []
    with open(path, "w") as out:
        for t in range(n_topics):
            docs = rng.choice(corpus, size=per_topic, replace=False)
            grades = rng.choice(4, size=per_topic, p=[0.55, 0.25, 0.13, 0.07])
            out.write("".join(f"{700 + t} 0 D{d} {g}\n" for d, g in zip(docs, grades, strict=True)))
            judged.append(docs)
    return judged


def write_run(path: Path, tag: str, judged: list[np.ndarray], depth: int, rng, corpus: int) -> None:
    with open(path, "w") as out:
        for t, jd in enumerate(judged):
            hits = rng.choice(jd, size=min(len(jd), int(rng.integers(10, len(jd) + 1))), replace=False)
            docs = np.unique(np.concatenate([hits, rng.choice(corpus, size=depth + 50, replace=False)]))
            docs = rng.permutation(docs)[:depth]
            scores = np.sort(rng.random(depth) * 30)[::-1]
            out.write("".join(f"{700 + t} Q0 D{d} {r + 1} {s:.6f} {tag}\n"
                              for r, (d, s) in enumerate(zip(docs, scores, strict=True))))


def generate(workdir: Path) -> dict:
    workdir.mkdir(parents=True, exist_ok=True)
    a_q, a_r = workdir / "a.qrels", workdir / "a.run"
    if not a_r.exists():
        rng = np.random.default_rng(2024)
        judged = write_qrels(a_q, 5000, 50, rng, 2_000_000)
        write_run(a_r, "runA", judged, 1000, rng, 2_000_000)
    b_q, b_dir = workdir / "b.qrels", workdir / "b_runs"
    if not (b_dir / "run099").exists():
        rng = np.random.default_rng(7)
        judged = write_qrels(b_q, 50, 500, rng, 500_000)
        b_dir.mkdir(exist_ok=True)
        for i in range(100):
            write_run(b_dir / f"run{i:03d}", f"run{i:03d}", judged, 1000, rng, 500_000)
    return {"a": (a_q, a_r), "b": (b_q, sorted(b_dir.iterdir()))}


# -- cases (each runs in a child process) -----------------------------------------------------------
def case_engine(qrels: str, runs: list[str]) -> dict:
    t0 = time.perf_counter()
    from evaluation.engine import Evaluator, Qrels
    from workbench.formats import read_qrels_table, read_run_arrays
    t1 = time.perf_counter()
    q = Qrels.from_frame(read_qrels_table(qrels))
    parsed = {Path(r).name: read_run_arrays(r) for r in runs}
    t2 = time.perf_counter()
    res = Evaluator(q, MEASURES_TE).evaluate_many(parsed)
    t3 = time.perf_counter()
    first = next(iter(res.values())).aggregate
    return {"import": t1 - t0, "parse": t2 - t1, "evaluate": t3 - t2, "map": first["map"]}


def case_pytrec_eval(qrels: str, runs: list[str]) -> dict:
    t0 = time.perf_counter()
    import pytrec_eval
    t1 = time.perf_counter()
    with open(qrels) as f:
        q = pytrec_eval.parse_qrel(f)
    parsed = []
    for r in runs:
        with open(r) as f:
            parsed.append(pytrec_eval.parse_run(f))
    t2 = time.perf_counter()
    ev = pytrec_eval.RelevanceEvaluator(q, MEASURES_PTE)
    results = [ev.evaluate(run) for run in parsed]
    t3 = time.perf_counter()
    maps = [v["map"] for v in results[0].values()]
    return {"import": t1 - t0, "parse": t2 - t1, "evaluate": t3 - t2, "map": float(np.mean(maps))}


def case_ranx(qrels: str, runs: list[str]) -> dict:
    t0 = time.perf_counter()
    from ranx import Qrels, Run, evaluate
    t1 = time.perf_counter()
    q = Qrels.from_file(qrels, kind="trec")
    parsed = [Run.from_file(r, kind="trec") for r in runs]
    t2 = time.perf_counter()
    scores = [evaluate(q, run, MEASURES_RANX) for run in parsed]
    t3 = time.perf_counter()
    return {"import": t1 - t0, "parse": t2 - t1, "evaluate": t3 - t2, "map": float(scores[0]["map"])}


CASES = {"engine": case_engine, "pytrec_eval": case_pytrec_eval, "ranx": case_ranx}


def measure(cmd: list[str]) -> dict:
    """Run ``cmd`` in a fresh wrapper process; wall time and the child's peak RSS (MB)."""
    wrapper = ("import json, resource, subprocess, sys, time; t = time.perf_counter(); "
               "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
               "w = time.perf_counter() - t; "
               "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024; "
               "print(json.dumps({'wall': w, 'rss': rss, 'code': p.returncode, 'out': p.stdout[-4000:], "
               "'err': p.stderr[-2000:]}))")
    env = {**os.environ, "DEBUG": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", wrapper, *cmd], capture_output=True, text=True, env=env,
                          cwd=ROOT)
    return json.loads(proc.stdout)


def run_case(name: str, qrels: Path, runs: list[Path]) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--case", name, str(qrels), *map(str, runs)]
    outer = measure(cmd)
    inner = json.loads(outer["out"].strip().splitlines()[-1]) if outer["code"] == 0 else {}
    return {**outer, **inner}


def run_cli(qrels: Path, run: Path) -> dict:
    args = [a for m in MEASURES_TE for a in ("-m", m)]
    outer = measure([sys.executable, str(ROOT / "manage.py"), "trec_eval", *args, str(qrels), str(run)])
    line = next((x for x in outer["out"].splitlines() if x.startswith("map ")), "")
    return {**outer, "map": float(line.split()[-1]) if line else float("nan")}


def trec_eval_binary(opts) -> tuple[Path | None, str]:
    """The C trec_eval to compare with, built from source if asked; (None, why) when there is none."""
    given = opts.trec_eval or os.environ.get("TREC_EVAL")
    if given:
        return (Path(given), "") if Path(given).is_file() else (None, f"no trec_eval binary at {given}")
    src = opts.trec_eval_src or os.environ.get("TREC_EVAL_SRC")
    if not src:
        return None, "no trec_eval given (--trec-eval PATH or --trec-eval-src DIR): C rows skipped"
    if not shutil.which("make") or not (shutil.which("cc") or shutil.which("gcc")):
        return None, "no C compiler or make here: trec_eval cannot be built, C rows skipped"
    build = opts.workdir / "trec_eval-build"
    if not (build / "trec_eval").exists():
        shutil.rmtree(build, ignore_errors=True)
        shutil.copytree(src, build, ignore=shutil.ignore_patterns(".git", "*.o", "trec_eval"))
        made = subprocess.run(["make", "-s"], cwd=build, capture_output=True, text=True)
        if made.returncode != 0:
            return None, f"building trec_eval in {build} failed: {made.stderr.strip()[-300:]}"
    return build / "trec_eval", ""


def run_binary(binary: Path, args: list[str]) -> dict:
    outer = measure([str(binary), *args])
    line = next((x for x in outer["out"].splitlines() if x.startswith("map ")), "")
    return {**outer, "map": float(line.split()[-1]) if line else float("nan")}


def first_topics(src: Path, dst: Path, n: int) -> Path:
    """``src`` with only the lines of its first ``n`` topics (by first appearance)."""
    if not dst.exists():
        seen: set[str] = set()
        with open(src) as inp, open(dst, "w") as out:
            for line in inp:
                qid = line.split(maxsplit=1)[0]
                if qid not in seen and len(seen) >= n:
                    continue
                seen.add(qid)
                out.write(line)
    return dst


def compare_c(opts, data: dict) -> list[str]:
    """Rows (c): the whole processes of manage.py trec_eval and of the C binary, same files and options."""
    binary, why = trec_eval_binary(opts)
    if binary is None:
        return [f"(c) skipped: {why}"]
    q, r = data["a"]
    five = [a for m in MEASURES_TE for a in ("-m", m)]
    q500 = first_topics(q, opts.workdir / "a500.qrels", 500)
    r500 = first_topics(r, opts.workdir / "a500.run", 500)
    rows = []
    for label, args in (("(c) 5,000 x 1,000, 5 measures", [*five, str(q), str(r)]),
                        ("(c) 500 x 1,000, -q -m all_trec", ["-q", "-m", "all_trec", str(q500), str(r500)])):
        ours = best_of(opts.repeat, lambda a=args: measure([sys.executable, str(ROOT / "manage.py"), "trec_eval", *a]))
        theirs = best_of(opts.repeat, lambda a=args: run_binary(binary, a))
        same = "identical" if ours.get("out") and ours["out"] == theirs.get("out") else "DIFFERENT"
        if len(theirs.get("out", "")) >= 4000:  # only the tails were kept: compare a checksum of whole outputs
            same = _same_output([sys.executable, str(ROOT / "manage.py"), "trec_eval", *args], [str(binary), *args])
        rows.append(f"| {label} | {ours['wall']:.2f} | {theirs['wall']:.2f} | {ours['wall'] / theirs['wall']:.2f} "
                    f"| {ours['rss']:.0f} | {theirs['rss']:.0f} | {ours['rss'] / theirs['rss']:.2f} | {same} |")
    head = ["| workload | manage.py trec_eval s | trec_eval (C) s | time ratio | peak MB | C peak MB "
            "| memory ratio | output |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    return head + rows


def _same_output(ours: list[str], theirs: list[str]) -> str:
    env = {**os.environ, "DEBUG": "1", "PYTHONPATH": str(ROOT)}
    a = subprocess.run(ours, capture_output=True, env=env, cwd=ROOT).stdout
    b = subprocess.run(theirs, capture_output=True).stdout
    return "identical" if a == b else "DIFFERENT"


def best_of(times: int, measure_once) -> dict:
    """The run with the lowest wall time of ``times`` (the machine is shared: noise only adds time)."""
    return min((measure_once() for _ in range(times)), key=lambda r: r.get("wall", float("inf")))


def warm(paths: list[Path]) -> None:
    """Read the files once so that no case pays for a cold page cache."""
    for path in paths:
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass


def table(rows: list[tuple[str, str, dict]]) -> str:
    out = ["| workload | case | wall s | parse s | evaluate s | peak RSS MB | map |",
           "|---|---|---:|---:|---:|---:|---:|"]
    def f(r: dict, key: str, fmt: str = "%.2f") -> str:
        return fmt % r[key] if key in r else "–"

    for workload, case, r in rows:
        out.append(f"| {workload} | {case} | {f(r, 'wall')} | {f(r, 'parse')} | {f(r, 'evaluate')} "
                   f"| {f(r, 'rss', '%.0f')} | {f(r, 'map', '%.4f')} |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=ROOT / "var" / "bench")
    parser.add_argument("--only", choices=["a", "b", "c"])
    parser.add_argument("--trec-eval", help="a trec_eval binary to compare with (or $TREC_EVAL)")
    parser.add_argument("--trec-eval-src", type=Path, help="a trec_eval source checkout to build (or $TREC_EVAL_SRC)")
    parser.add_argument("--case", choices=sorted(CASES))
    parser.add_argument("--repeat", type=int, default=2, help="best of N runs (ranx: once)")
    parser.add_argument("files", nargs="*")
    opts = parser.parse_args()
    if opts.case:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(CASES[opts.case](opts.files[0], opts.files[1:])))
        return 0
    data = generate(opts.workdir)
    rows = []
    if opts.only in (None, "a"):
        q, r = data["a"]
        warm([q, r])
        rows.append(("(a) 5,000 x 1,000", "manage.py trec_eval (whole process)",
                     best_of(opts.repeat, lambda: run_cli(q, r))))
        for name in ("engine", "pytrec_eval", "ranx"):
            times = 1 if name == "ranx" else opts.repeat
            rows.append(("(a) 5,000 x 1,000", name, best_of(times, lambda n=name: run_case(n, q, [r]))))
    if opts.only in (None, "b"):
        q, runs = data["b"]
        warm([q, *runs])
        for name in ("engine", "pytrec_eval", "ranx"):
            times = 1 if name == "ranx" else opts.repeat
            rows.append(("(b) 100 runs x 50 x 1,000", name, best_of(times, lambda n=name: run_case(n, q, runs))))
    if rows:
        print(table(rows))
    if opts.only in (None, "c"):
        print("\n" + "\n".join(compare_c(opts, data)))
    for _, case, r in rows:
        if r.get("code"):
            print(f"\n{case} failed: {r.get('err', '')[-500:]}")
    a = {case: r for w, case, r in rows if w.startswith("(a)")}
    if "pytrec_eval" in a and "manage.py trec_eval (whole process)" in a:
        cli, pte = a["manage.py trec_eval (whole process)"], a["pytrec_eval"]
        ratio = cli["wall"] / (pte["parse"] + pte["evaluate"])
        print(f"\n(a) whole manage.py process / pytrec_eval parse+evaluate = {ratio:.2f} (target <= 0.4); "
              f"peak RSS {cli['rss']:.0f} MB vs {pte['rss']:.0f} MB")
    return 0


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    sys.exit(main())
