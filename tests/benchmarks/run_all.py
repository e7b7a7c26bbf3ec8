"""`make bench`: every benchmark script in this folder, one after the other, tables to stdout."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: scripts run more than once: each list is one more run's arguments (the first run takes none)
AGAIN = {"bench_leaderboard_pages.py": [["--runs", "500"]],  # the 500-run track, beside the 150-run one
         # every results page at 500 runs too, and both sizes' pages served from PostgreSQL
         "bench_pages.py": [["--runs", "500", "--no-judging"], ["--no-judging", "--page-database", "postgres"],
                            ["--runs", "500", "--no-judging", "--page-database", "postgres"]]}

if __name__ == "__main__":
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        for arguments in [[], *AGAIN.get(script.name, [])]:
            print(f"\n## {script.stem} {' '.join(arguments)}\n", flush=True)
            if subprocess.run([sys.executable, str(script), *arguments]).returncode != 0:
                failed.append(" ".join([script.name, *arguments]))
    if failed:
        sys.exit(f"benchmarks failed: {', '.join(failed)}")
