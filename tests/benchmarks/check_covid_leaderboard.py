"""Check `manage.py evaluate` against the official TREC-COVID round 2 leaderboard.

    DEBUG=1 .venv/bin/python tests/benchmarks/check_covid_leaderboard.py [--data DIR] [--keep DIR]

Imports ../shared/peer-tests/trec_covid_round2 into a fresh SQLite database through the management
commands (topics XML, qrels.covid-round2.txt, every run; runs whose leaderboard.csv "contributed
judgments" is "no" with ``--no-pool``, teams from the leaderboard), runs
``evaluate -m ndcg_cut.10 -m P.5 -m bpref -m map -m rbp_graded.p=0.5``, and compares every run with
leaderboard.csv to 4 decimals (NDCG@10, P@5, bpref, MAP, RBP(p=.5)). The official RBP(p=.5) is NIST
trec_eval's ``rbp`` (``m_rbp.c``): graded gains grade / max grade, base only, no residual; that is the
engine's ``rbp_graded`` (its ``rbp`` is binary at the relevance level: 0.8626 instead of 0.7547 for
mpiid5_run3). Then checks that the runs flagged "did not contribute to the pool" are exactly the "no"
runs, and reports the other flags (judged@10 < 0.8) plainly. Exit status 1 on a mismatch.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "peer-tests" / "trec_covid_round2"
COLUMNS = {"NDCG@10": "ndcg_cut_10", "P@5": "P_5", "bpref": "bpref", "MAP": "map", "RBP(p=.5)": "rbp_graded_p=0.5"}
NOT_CONTRIBUTED = "did not contribute to the pool"


def manage(env: dict, *args: str) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args[:3])} ... failed:\n{result.stderr.strip()}")
    return elapsed, result.stdout


def import_track(env: dict, data: Path, board: pd.DataFrame) -> dict[str, float]:
    timings = {}
    manage(env, "migrate", "-v0")
    manage(env, "create_collection", "covid", "--grades", "0=Not relevant,1=Partially relevant,2=Relevant",
           "--relevant-from", "1")
    timings["import_topics"], _ = manage(env, "import_topics", "covid", str(data / "topics.covid-round2.xml"))
    timings["import_qrels"], _ = manage(env, "import_qrels", "covid", str(data / "qrels.covid-round2.txt"),
                                        "--assessor", "nist")
    total = 0.0
    for (team, contributed), rows in board.groupby(["team", "contributed judgments"], sort=True):
        files = [str(data / "runs" / f"{tag}.gz") for tag in rows["tag"]]
        elapsed, _ = manage(env, "import_runs", "covid", *files, "--team", str(team),
                            *(["--no-pool"] if contributed == "no" else []))
        total += elapsed
    timings["import_runs (all teams)"] = total
    return timings


def compare(out: dict, board: pd.DataFrame) -> tuple[list[str], dict]:
    runs = {r["run"]: r for r in out["runs"]}
    problems = []
    worst = {c: 0.0 for c in COLUMNS}
    for row in board.itertuples(index=False):
        tag = row.tag
        if tag not in runs:
            problems.append(f"{tag}: missing from evaluate's output")
            continue
        got = runs[tag]["measures"]
        for column, name in COLUMNS.items():
            expected = float(getattr(row, _attr(column)))
            diff = abs(round(got[name], 4) - expected)
            worst[column] = max(worst[column], abs(got[name] - expected))
            if diff > 1e-9:
                problems.append(f"{tag}: {name} {got[name]:.4f} != official {expected:.4f}")
    return problems, {"worst": worst}


def _attr(column: str) -> str:
    return {"NDCG@10": "ndcg", "P@5": "p5", "bpref": "bpref", "MAP": "map", "RBP(p=.5)": "rbp"}[column]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--keep", type=Path, default=None, help="Keep the database in this directory")
    parser.add_argument("--reuse", action="store_true", help="With --keep: evaluate the database imported before")
    args = parser.parse_args()
    board = pd.read_csv(args.data / "leaderboard.csv")
    board = board.rename(columns={"NDCG@10": "ndcg", "P@5": "p5", "RBP(p=.5)": "rbp", "MAP": "map"})
    yes = set(board.loc[board["contributed judgments"] == "yes", "tag"])
    no = set(board.loc[board["contributed judgments"] == "no", "tag"])
    with tempfile.TemporaryDirectory() as tmp:
        var = args.keep or Path(tmp)
        var.mkdir(parents=True, exist_ok=True)
        env = {"PATH": os.environ["PATH"], "DEBUG": "1", "WORKBENCH_VAR_DIR": str(var)}
        env.pop("DATABASE_URL", None)
        timings = {} if args.reuse and args.keep else import_track(env, args.data, board)
        timings["evaluate (json, whole process)"], text = manage(
            env, "evaluate", "covid", "-m", "ndcg_cut.10", "-m", "P.5", "-m", "bpref", "-m", "map",
            "-m", "rbp_graded.p=0.5")
        out = json.loads(text)
    problems, summary = compare(out, board)
    flagged_nc = {r["run"] for r in out["runs"] if NOT_CONTRIBUTED in r["flags"]}
    flagged_any = {r["run"] for r in out["runs"] if r["flags"]}
    low_judged = sorted((r["run"], r["judged_at_10"]) for r in out["runs"] if r["judged_at_10"] < 0.8)
    if flagged_nc != no:
        problems.append(f"flagged as not contributing: {len(flagged_nc)} runs, expected the {len(no)} 'no' runs "
                        f"(extra {sorted(flagged_nc - no)[:5]}, missing {sorted(no - flagged_nc)[:5]})")

    print("| check | result |\n|---|---|")
    print(f"| runs in leaderboard.csv / evaluated | {len(board)} / {len(out['runs'])} |")
    print(f"| contributed judgments yes / no | {len(yes)} / {len(no)} |")
    print(f"| flagged 'did not contribute to the pool' | {len(flagged_nc)} (= the 'no' runs: {flagged_nc == no}) |")
    print(f"| flagged for any reason (incl. judged@10 < 0.8) | {len(flagged_any)} |")
    contributing_low = [t for t, _ in low_judged if t in yes]
    print(f"| judged@10 < 0.8 | {len(low_judged)} runs ({len(contributing_low)} of them contributing) |")
    for column in COLUMNS:
        print(f"| largest |difference| {column} | {summary['worst'][column]:.2e} |")
    for name, seconds in timings.items():
        print(f"| {name} | {seconds:.2f} s |")
    if problems:
        print(f"\n{len(problems)} problems:")
        for line in problems[:30]:
            print(f"- {line}")
        return 1
    print("\nAll runs match the official leaderboard to 4 decimals (NDCG@10, P@5, bpref, MAP, RBP(p=.5)).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
