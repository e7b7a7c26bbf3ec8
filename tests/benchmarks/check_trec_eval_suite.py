"""Run trec_eval's own regression suite through ``manage.py trec_eval`` and diff with 9.0.8's outputs.

Reads ``../shared/peer-tests/trec_eval/`` (``QUICKTEST_COMMANDS.txt``, inputs, ``expected_v9.0.8/``), so it is
a script, not a project test::

    DEBUG=1 .venv/bin/python tests/benchmarks/check_trec_eval_suite.py [--suite DIR]

For each command whose expected output is a target (out.test, .a, .aq, .aqc, .aqcM, .aql, .meas_params)
it prints ``MATCH`` or the differing lines, and exits non-zero if any target differs. The preference,
qrels_jg and z-score commands are listed as not targeted.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SUITE = ROOT.parent / "shared" / "peer-tests" / "trec_eval"
TARGETS = {"out.test", "out.test.a", "out.test.aq", "out.test.aqc", "out.test.aqcM", "out.test.aql",
           "out.test.meas_params"}


def commands(suite: Path) -> list[tuple[list[str], str]]:
    """(trec_eval arguments with paths into ``suite``, expected output file name) per suite line."""
    found = []
    for line in (suite / "QUICKTEST_COMMANDS.txt").read_text().splitlines():
        line = line.strip()
        if not line.startswith("./trec_eval"):
            continue
        left, _, right = line.partition("| diff - ")
        args = shlex.split(left)[1:]
        args = [str(suite / a[len("test/"):]) if a.startswith("test/") else a for a in args]
        found.append((args, right.strip().removeprefix("test/")))
    return found


def run(args: list[str]) -> tuple[int, str, str]:
    env = {**os.environ, "DEBUG": os.environ.get("DEBUG", "1")}
    proc = subprocess.run([sys.executable, str(ROOT / "manage.py"), "trec_eval", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    return proc.returncode, proc.stdout, proc.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=DEFAULT_SUITE)
    opts = parser.parse_args()
    failed = 0
    for args, expected_name in commands(opts.suite):
        if expected_name not in TARGETS:
            print(f"{expected_name:22s} not targeted (preference / qrels_jg / z-score formats)")
            continue
        code, out, err = run(args)
        expected = (opts.suite / "expected_v9.0.8" / expected_name).read_text().splitlines()
        got = out.splitlines()
        bad = [(i, e, g) for i, (e, g) in enumerate(zip(expected, got, strict=False)) if e != g]
        if code != 0 or bad or len(expected) != len(got):
            failed += 1
            print(f"{expected_name:22s} DIFFERS (exit {code}, {len(got)} lines, expected {len(expected)}, "
                  f"{len(bad)} differing)")
            for line in err.splitlines()[:3]:
                print(f"    stderr: {line}")
            for i, e, g in bad[:10]:
                print(f"    line {i + 1}: expected {e!r}\n    {' ' * len(str(i + 1))}       got      {g!r}")
        else:
            print(f"{expected_name:22s} MATCH ({len(expected)} lines)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
