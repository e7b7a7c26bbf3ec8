"""``manage.py evaluate SLUG [-m MEASURE]... [--runs TAG...] [--qrels current|majority|adjudicated|ASSESSOR]
[--format json|csv|trec]``: every run of a collection scored against its current judgments.

trec_eval's rules (unjudged = non-relevant, ``-M 1000``, relevant from the collection's ``relevant_from``);
measure names as trec_eval prints them. Each run says whether it contributed to the pool and its judged@10,
and is flagged when it did not contribute or judged@10 is below ``--judged-threshold``. The scores go to
standard output; how far it is (a bar on a terminal, lines on a pipe) and its closing line to standard error.
"""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

from evaluation.engine.cli import format_value
from evaluation.scoring import EvaluationError, parse_requests
from evaluation.selectors import DEFAULT_MEASURES, leaderboard
from judging.models import Judgment
from judging.policies import DEFAULT_POLICY, QRELS_POLICIES
from workbench.formats import spreadsheet
from workbench.management.base import Error, WorkbenchCommand
from workbench.management.progress import Shown

#: "current" is the default policy's other name
POLICIES = ("current", *QRELS_POLICIES)


class Command(WorkbenchCommand):
    help = ("Evaluate every run of a collection against its current judgments (trec_eval's rules), with "
            "pool-bias flags. Output: json (default), csv (one row per run) or trec (trec_eval's lines).")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                            help=f"trec_eval measure, repeatable (default: {' '.join(DEFAULT_MEASURES)})")
        parser.add_argument("--runs", nargs="+", metavar="TAG", help="Only these runs")
        parser.add_argument("--qrels", default="current",
                            help="current (= adjudicated, the default), majority, adjudicated, or an assessor's name")
        parser.add_argument("--format", choices=["json", "csv", "trec"], default="json")
        parser.add_argument("--judged-threshold", type=float, default=0.8,
                            help="Flag runs whose judged@10 is below this (default 0.8)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        policy, assessor = DEFAULT_POLICY, None
        if opts["qrels"] not in POLICIES:
            assessor = opts["qrels"]
            if not Judgment.objects.filter(collection=collection, assessor=assessor).exists():
                known = list(Judgment.objects.filter(collection=collection).order_by("assessor")
                             .values_list("assessor", flat=True).distinct())
                raise Error(f"--qrels {assessor!r}: not a policy ({', '.join(POLICIES)}) nor an assessor of "
                            f"{collection.slug!r} ({', '.join(known) or 'nobody has judged yet'})")
        elif opts["qrels"] != "current":
            policy = opts["qrels"]
        measures = opts["measures"] or list(DEFAULT_MEASURES)
        started = time.monotonic()
        try:
            kinds = {n: m.spec.value for m in parse_requests(measures) for n in m.names}
            with Shown(SimpleNamespace(stdout=self.stderr), 1, "stage", f"evaluating {collection.slug}") as shown:
                if not shown.terminal:  # standard output is the scores: how far it is goes to standard error
                    which = f"{len(opts['runs'])} run{'s' if len(opts['runs']) != 1 else ''}" if opts["runs"] \
                        else "every run"
                    self.stderr.write(f"0% evaluating {collection.slug}: reading the runs and the qrels, scoring {which}")
                board = leaderboard(collection, measures=measures, tags=opts["runs"], qrels_policy=policy,
                                    assessor=assessor, judged_threshold=opts["judged_threshold"])
                shown.report(f"evaluating {collection.slug}: {len(board.runs)} runs scored", 1)
        except EvaluationError as exc:
            raise Error(str(exc)) from None
        {"json": self._json, "csv": self._csv, "trec": self._trec}[opts["format"]](board, kinds)
        self.stderr.write(f"evaluated {len(board.runs)} runs of {collection.slug!r} on {len(board.topics)} topics "
                          f"({', '.join(board.measures)}; qrels {opts['qrels']}); {time.monotonic() - started:.1f} s")

    def _json(self, board, kinds) -> None:
        self.stdout.write(json.dumps(board.as_dict(per_topic=True), indent=1))

    def _csv(self, board, kinds) -> None:
        writer = spreadsheet.writer(self.stdout, lineterminator="\n")  # text cells safe in a spreadsheet
        writer.writerow(["run", "team", "contributed", "rank", *board.measures, "judged_at_10", "flags"])
        for r in board.runs:
            writer.writerow([r.tag, r.team, "yes" if r.contributed else "no", r.rank,
                             *(format_value(r.measures[n], kinds.get(n, "float")).strip() if n in r.measures else ""
                               for n in board.measures),
                             format_value(r.judged_at_10, "float").strip(), "; ".join(r.flags)])

    def _trec(self, board, kinds) -> None:
        for r in board.runs:
            self.stdout.write(f"{'runid':<22}\tall\t{r.tag}")
            for name in board.measures:
                if name in r.measures:
                    self.stdout.write(f"{name:<22}\tall\t{format_value(r.measures[name], kinds.get(name, 'float'))}")
