"""Import the real TREC data of ../shared/peer-tests with the CLI and check the counts.

Also: a malformed run is refused naming its line with nothing imported, and `build_pool --depth 7`
over the TREC-COVID round 2 runs NIST marked as contributing reproduces NIST's pool (5,961 pairs,
every one judged in the official qrels).

Run: .venv/bin/python tests/benchmarks/check_peer_imports.py   (exit 1 if any check fails)
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEER = ROOT.parent / "shared" / "peer-tests"
failures: list[str] = []


def manage(env, *args, expect_ok: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "manage.py", *map(str, args)], cwd=ROOT, env=env, capture_output=True,
                            text=True)
    if expect_ok and result.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(map(str, args))} failed:\n{result.stderr}")
    return result


def check(label: str, got, expected) -> None:
    ok = got == expected
    print(f"| {label} | {got:,} | {expected:,} | {'ok' if ok else 'MISMATCH'} |" if isinstance(got, int) and not isinstance(got, bool)
          else f"| {label} | {got} | {expected} | {'ok' if ok else 'MISMATCH'} |")
    if not ok:
        failures.append(label)


def show(env, slug) -> dict:
    return json.loads(manage(env, "show_collection", slug).stdout)


def main() -> None:
    if not PEER.exists():
        raise SystemExit(f"{PEER} not found")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {"PATH": os.environ["PATH"], "DEBUG": "1", "WORKBENCH_VAR_DIR": str(tmp / "var")}
        manage(env, "migrate", "-v0")
        print("| check | got | expected | |\n|---|---:|---:|---|")

        # Vaswani: topics in <top> SGML, binary qrels (the corpus file in shared is only a pointer)
        manage(env, "create_collection", "vaswani")
        manage(env, "import_topics", "vaswani", PEER / "vaswani_npl" / "query-text.trec")
        manage(env, "import_qrels", "vaswani", PEER / "vaswani_npl" / "qrels")
        summary = show(env, "vaswani")
        check("Vaswani topics", summary["topics"], 93)
        check("Vaswani judgments", summary["judgments"], 2083)

        # Robust04 topics: classic TREC SGML with unclosed tags
        manage(env, "create_collection", "robust04")
        manage(env, "import_topics", "robust04", PEER / "topics_qrels" / "topics.robust04.txt")
        check("Robust04 topics", show(env, "robust04")["topics"], 250)

        # TREC DL 2019 passage: TSV topics, graded qrels with a Q0 column
        manage(env, "create_collection", "dl19", "--grades",
               "0=Irrelevant,1=Related,2=Highly relevant,3=Perfectly relevant", "--relevant-from", "2")
        manage(env, "import_topics", "dl19", PEER / "topics_qrels" / "topics.dl19-passage.txt")
        manage(env, "import_qrels", "dl19", PEER / "topics_qrels" / "qrels.dl19-passage.txt")
        summary = show(env, "dl19")
        check("DL 2019 topics", summary["topics"], 43)
        check("DL 2019 judgments", summary["judgments"], 9260)

        # TREC-COVID round 2: XML topics, qrels with a judging-round column, 136 official runs
        covid = PEER / "trec_covid_round2"
        manage(env, "create_collection", "covid", "--grades", "0=Not relevant,1=Partially relevant,2=Relevant")
        manage(env, "import_topics", "covid", covid / "topics.covid-round2.xml")
        manage(env, "import_qrels", "covid", covid / "qrels.covid-round2.txt")
        with open(covid / "leaderboard.csv") as handle:
            board = list(csv.DictReader(handle))
        contributing = [r["tag"] for r in board if r["contributed judgments"] == "yes"]
        others = [r["tag"] for r in board if r["contributed judgments"] != "yes"]
        start = time.perf_counter()
        manage(env, "import_runs", "covid", *[covid / "runs" / f"{t}.gz" for t in contributing])
        manage(env, "import_runs", "covid", "--no-pool", *[covid / "runs" / f"{t}.gz" for t in others])
        elapsed = time.perf_counter() - start
        summary = show(env, "covid")
        check("TREC-COVID topics", summary["topics"], 35)
        check("TREC-COVID judgments", summary["judgments"], 12037)
        check("TREC-COVID runs", len(summary["runs"]), 136)
        print(f"\n(136 runs, {sum(1 for _ in covid.glob('runs/*.gz'))} files, imported in {elapsed:.1f} s)\n")

        # a malformed run: refused with its line named, nothing imported
        bad = tmp / "broken.gz"
        with gzip.open(covid / "runs" / f"{contributing[0]}.gz", "rt") as src:
            lines = src.read().splitlines()
        fields = lines[999].split()
        fields[0:6] = [fields[0], fields[1], "broken-doc", fields[3], "not-a-number", "broken"]
        lines = [line.replace(line.split()[-1], "broken") for line in lines]
        lines[999] = " ".join(fields)
        with gzip.open(bad, "wt") as out:
            out.write("\n".join(lines) + "\n")
        result = manage(env, "import_runs", "covid", bad, expect_ok=False)
        print("| check | got | expected | |\n|---|---:|---:|---|")
        check("malformed run refused (exit status)", result.returncode != 0, True)
        check("error names the file and line", f"{bad}:1000:" in result.stderr, True)
        check("runs after the refused import", len(show(env, "covid")["runs"]), 136)

        # NIST's depth-7 pool over the 52 contributing runs
        manage(env, "build_pool", "covid", "--depth", "7", "--seed", "1")
        pool = manage(env, "export_pool", "covid").stdout.split("\n")
        pairs = {tuple(line.split()) for line in pool if line}
        judged = set()
        with open(covid / "qrels.covid-round2.txt") as handle:
            for line in handle:
                qid, _, docno, _ = line.split()
                judged.add((qid, docno))
        check("depth-7 pool over the 52 contributing runs", len(pairs), 5961)
        check("pooled pairs judged in the official qrels", len(pairs & judged), 5961)
    if failures:
        sys.exit(f"FAILED: {', '.join(failures)}")
    print("\nall checks passed")


if __name__ == "__main__":
    main()
