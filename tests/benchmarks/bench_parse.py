"""Benchmark: parsing runs and qrels with workbench.formats against pandas and pyarrow.

Run: .venv/bin/python tests/benchmarks/bench_parse.py [--repeat 3] [--skip-5m]

Generates, in a temporary folder: a 1,000,000-line run (1,000 topics x 1,000 documents), a
5,000,000-line run (5,000 x 1,000; also gzipped), the 1M run rewritten with tabs and runs of blanks
(the normalising path), and a 250,000-line qrels file (5,000 topics x 50 graded judgments).
Each case runs in a fresh Python process (imports excluded from the time, included in the memory);
the table gives the best wall time of ``--repeat`` runs and the peak RSS of that process (``VmHWM`` of
the child: ``ru_maxrss`` would inherit this parent's high-water mark through fork+exec on Linux).
The machine is shared: compare ratios measured in the same run rather than absolute figures across runs.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parents[2]

RUN_NAMES = ["qid", "q0", "docno", "rank", "score", "tag"]
QRELS_NAMES = ["qid", "iter", "docno", "rel"]

CASES = {
    "read_run_arrays (manage.py trec_eval: arrays, no pandas)":
        "from workbench.formats import read_run_arrays\nresult = read_run_arrays(PATH).score",
    "read_run (trec_eval rules, as a frame)":
        "from workbench.formats import read_run\n"
        "result = read_run(PATH, max_depth=None, check_warnings=False, trec_eval_rules=True).frame",
    "read_run (import path: depth 1000, warnings)":
        "from workbench.formats import read_run\nresult = read_run(PATH).frame",
    "pandas.read_csv(sep=r'\\s+')":
        "import pandas as pd\n"
        "result = pd.read_csv(PATH, sep=r'\\s+', header=None, names=NAMES, dtype={NAMES[0]: str, NAMES[2]: str})",
    "pyarrow.csv.read_csv(delimiter=' ')":
        "import pyarrow.csv as c\n"
        "result = c.read_csv(PATH, read_options=c.ReadOptions(column_names=NAMES), "
        "parse_options=c.ParseOptions(delimiter=' '))",
    "read_qrels":
        "from workbench.formats import read_qrels\nresult = read_qrels(PATH)",
    "read_qrels_table":
        "from workbench.formats import read_qrels_table\nresult = read_qrels_table(PATH)",
}

CHILD = """
import sys, time, json
sys.path.insert(0, {root!r})
PATH, NAMES = {path!r}, {names!r}
{imports}
start = time.perf_counter()
{body}
elapsed = time.perf_counter() - start
peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({{"seconds": elapsed, "rows": len(result), "peak_mb": peak_kb / 1024}}))
"""


def _join(columns: list[pa.Array]) -> bytes:
    """Space-joined lines of the given string columns, as one bytes object."""
    lines = pc.binary_join_element_wise(*columns, pa.array([""] * len(columns[0])), " ")
    lines = pc.utf8_replace_slice(lines, start=-1, stop=2**31 - 1, replacement="\n")
    return lines.buffers()[2].to_pybytes()[: pc.sum(pc.binary_length(lines)).as_py()]


def write_run(path: Path, topics: int, depth: int, seed: int = 7) -> int:
    """A run like a real submission: scores descending per topic, docnos unique within a topic."""
    rng = np.random.default_rng(seed)
    n = topics * depth
    qids = np.repeat(np.arange(1, topics + 1) * 3 + 100, depth)
    ranks = np.tile(np.arange(1, depth + 1), topics)
    docs = (rng.integers(0, 8_000, size=n) * 1_000 + np.tile(np.arange(depth), topics)).astype(np.int64)
    scores = np.round(30.0 - ranks * 0.02 - rng.random(n) * 0.01, 5)
    as_text = [pc.cast(pa.array(qids), pa.string()), pa.array(["Q0"] * n),
               pc.binary_join_element_wise(pa.array(["D"] * n), pc.cast(pa.array(docs), pa.string()), ""),
               pc.cast(pa.array(ranks), pa.string()), pc.cast(pa.array(scores), pa.string()),
               pa.array(["benchrun"] * n)]
    path.write_bytes(_join(as_text))
    return n


def write_qrels(path: Path, topics: int, per_topic: int, seed: int = 8) -> int:
    rng = np.random.default_rng(seed)
    n = topics * per_topic
    qids = np.repeat(np.arange(1, topics + 1) * 3 + 100, per_topic)
    docs = rng.integers(0, 8_000, size=n) * 1_000 + np.tile(np.arange(per_topic), topics)
    grades = rng.choice([0, 0, 0, 1, 2, 3], size=n)
    as_text = [pc.cast(pa.array(qids), pa.string()), pa.array(["0"] * n),
               pc.binary_join_element_wise(pa.array(["D"] * n), pc.cast(pa.array(docs), pa.string()), ""),
               pc.cast(pa.array(grades), pa.string())]
    path.write_bytes(_join(as_text))
    return n


def messy_copy(source: Path, dest: Path) -> None:
    """The same run with tabs, doubled blanks and trailing blanks: forces the normalising path."""
    data = source.read_bytes()
    dest.write_bytes(data.replace(b" Q0 ", b"\tQ0  ").replace(b"\n", b" \n"))


def measure(case: str, path: Path, names: list[str], repeat: int) -> dict | None:
    """Best of ``repeat`` fresh processes; None when the reader cannot parse the file (pyarrow, messy)."""
    body = CASES[case]
    imports, _, call = body.rpartition("\n")
    code = CHILD.format(root=str(ROOT), path=str(path), names=names, imports=imports, body=call)
    best = None
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            if "pyarrow.csv" in case and "ArrowInvalid" in out.stderr:
                return None
            raise SystemExit(f"{case} on {path.name} failed:\n{out.stderr}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-5m", action="store_true", help="only the 1M run and the qrels")
    args = parser.parse_args()
    run_cases = [c for c in CASES if not c.startswith("read_qrels")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        files = [("run, 1M lines", folder / "run1m.txt", write_run(folder / "run1m.txt", 1_000, 1_000))]
        messy_copy(folder / "run1m.txt", folder / "run1m-messy.txt")
        files.append(("run, 1M lines, tabs + blanks", folder / "run1m-messy.txt", files[0][2]))
        if not args.skip_5m:
            n = write_run(folder / "run5m.txt", 5_000, 1_000)
            files.append(("run, 5M lines", folder / "run5m.txt", n))
            with open(folder / "run5m.txt", "rb") as raw, gzip.open(folder / "run5m.txt.gz", "wb", 1) as packed:
                packed.write(raw.read())
            files.append(("run, 5M lines, .gz", folder / "run5m.txt.gz", n))
        qrels_lines = write_qrels(folder / "qrels.txt", 5_000, 50)
        print(f"(generated the inputs in {time.perf_counter() - started:.1f} s)\n", flush=True)

        print("| input | reader | time (s) | peak RSS (MB) | time / pyarrow |")
        print("|---|---|---:|---:|---:|")
        for label, path, lines in files:
            results = {case: measure(case, path, RUN_NAMES, args.repeat) for case in run_cases}
            arrow = results["pyarrow.csv.read_csv(delimiter=' ')"]
            for case, result in results.items():
                if result is None:
                    print(f"| {label} | {case} | cannot parse it | | |", flush=True)
                    continue
                if result["rows"] != lines:
                    raise SystemExit(f"{case} read {result['rows']} rows of {lines} from {path.name}")
                ratio = f"{result['seconds'] / arrow['seconds']:.2f}" if arrow else ""
                print(f"| {label} | {case} | {result['seconds']:.2f} | {result['peak_mb']:.0f} | {ratio} |",
                      flush=True)
        qrels_cases = ("read_qrels", "read_qrels_table", "pandas.read_csv(sep=r'\\s+')",
                       "pyarrow.csv.read_csv(delimiter=' ')")
        results = {case: measure(case, folder / "qrels.txt", QRELS_NAMES, args.repeat) for case in qrels_cases}
        base = results["pyarrow.csv.read_csv(delimiter=' ')"]["seconds"]
        for case, result in results.items():
            print(f"| qrels, {qrels_lines:,} lines | {case} | {result['seconds']:.2f} | {result['peak_mb']:.0f} | "
                  f"{result['seconds'] / base:.2f} |", flush=True)


if __name__ == "__main__":
    main()
