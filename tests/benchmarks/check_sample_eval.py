"""Compare ``manage.py xinfap`` (evaluation.engine.xinfap) with NIST's ``sample_eval.pl`` on random stratified
samples: every output line, per topic and overall, must be identical.

    .venv/bin/python tests/benchmarks/check_sample_eval.py --sample-eval PATH [--cases 200]

PATH is the script (https://trec.nist.gov/data/clinical/sample_eval.pl, or ``$SAMPLE_EVAL``); it needs perl.
Without it, or without perl, the check is skipped with a notice (exit 0). Cases mix three strata sampled at
1, 1/2 and 1/10, graded judgments 0-3, documents outside the population, runs longer than 1,000 lines, and
scores with ties (integers) or without.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evaluation.engine.curves import ranked_docnos  # noqa: E402
from evaluation.engine.xinfap import evaluate, parse_sampled_qrels, report_lines  # noqa: E402


def case(seed: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for topic in range(1, int(rng.integers(2, 6))):
        population = rng.choice(3000, size=int(rng.integers(5, 400)), replace=False)
        for doc in population:
            stratum = str(int(rng.integers(1, 4)))
            sampled = rng.random() < {"1": 1.0, "2": 0.5, "3": 0.1}[stratum]
            grade = int(rng.choice([0, 0, 1, 2, 3])) if sampled else -1
            qrels.append(f"{topic} 0 D{doc} {stratum} {grade}")
        docs = [f"D{d}" for d in rng.choice(population, size=int(rng.integers(1, len(population) + 1)),
                                            replace=False)]
        docs += [f"X{x}" for x in rng.choice(100000, size=int(rng.integers(0, 1300)), replace=False)]
        scores = rng.integers(0, 50, size=len(docs)) if seed % 2 else rng.random(len(docs))
        run += [f"{topic} Q0 {d} 1 {s} run" for d, s in zip(docs, scores, strict=True)]
    return qrels, run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample-eval", default=os.environ.get("SAMPLE_EVAL"))
    parser.add_argument("--cases", type=int, default=200)
    opts = parser.parse_args()
    if not opts.sample_eval or not Path(opts.sample_eval).is_file() or not shutil.which("perl"):
        print("check_sample_eval: skipped: give --sample-eval PATH (NIST's sample_eval.pl) and have perl")
        return 0
    different = 0
    with tempfile.TemporaryDirectory() as tmp:
        qrels_path, run_path = Path(tmp) / "qrels", Path(tmp) / "run"
        for seed in range(opts.cases):
            qrels, run = case(seed)
            qrels_path.write_text("\n".join(qrels) + "\n")
            run_path.write_text("\n".join(run) + "\n")
            theirs = subprocess.run(["perl", opts.sample_eval, "-q", str(qrels_path), str(run_path)],
                                    capture_output=True, text=True).stdout.splitlines()
            fields = [line.split() for line in run]
            rankings = ranked_docnos([f[0] for f in fields], [float(f[4]) for f in fields], [f[2] for f in fields])
            ours = report_lines(evaluate(parse_sampled_qrels(qrels), rankings), per_topic=True)
            if ours != theirs:
                different += 1
                first = next((a, b) for a, b in zip(theirs, ours, strict=False) if a != b) if theirs else ()
                print(f"case {seed}: DIFFERENT, first: {first}")
    print(f"check_sample_eval: {opts.cases} random cases, {opts.cases - different} identical to sample_eval.pl "
          f"line for line")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
