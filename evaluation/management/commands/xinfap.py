"""``manage.py xinfap QRELS RUN [-q] [--ci]``: xinfAP, infNDCG and the inferred precisions of a run against
stratified-sample qrels (``topic iter docno stratum grade``), with the output of NIST's ``sample_eval.pl``
(see :mod:`evaluation.engine.xinfap`). ``--ci`` adds a 95% interval of each mean over the topics."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from evaluation.engine.curves import ranked_docnos
from evaluation.engine.xinfap import confidence_intervals, evaluate, parse_sampled_qrels, report_lines
from evaluation.management.files import one_line_errors
from workbench.formats import read_run
from workbench.management.errors import Error

#: manage.py runs this command without starting Django (files only: no database, no app; see manage.py)
STANDALONE = True


class Command(BaseCommand):
    help = "xinfAP and infNDCG of a run against stratified-sample qrels, as NIST's sample_eval.pl computes them."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("qrels", help="topic iter docno stratum grade (grade -1: in the population, not sampled)")
        parser.add_argument("run", help="a TREC run")
        parser.add_argument("-q", dest="per_topic", action="store_true", help="each topic's values too")
        parser.add_argument("--ci", action="store_true", help="95%% t intervals of the infAP and infNDCG means")

    def handle(self, *args, **opts):
        with one_line_errors():
            with open(opts["qrels"], encoding="utf-8", errors="replace") as handle:
                qrels = parse_sampled_qrels(handle, name=opts["qrels"])
            frame = read_run(opts["run"], name=opts["run"], max_depth=None, check_warnings=False,
                             trec_eval_rules=True).frame
            rankings = ranked_docnos(frame["qid"].astype(str), frame["score"].tolist(), frame["docno"].tolist())
        result = evaluate(qrels, rankings)
        if not result["topics"]:
            raise Error("no topic is in both the qrels and the run")
        intervals = confidence_intervals(result["topics"]) if opts["ci"] else None
        self.stdout.write("\n".join(report_lines(result, per_topic=opts["per_topic"], intervals=intervals)))
