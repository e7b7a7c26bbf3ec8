"""``manage.py diversity SUBTOPIC_QRELS RUN [--alpha A] [--beta B] [--cutoffs 5,10,20] [-c]``: the novelty and
diversity measures of the TREC Web track's ``ndeval`` (alpha-nDCG, ERR-IA, NRBP, MAP-IA, P-IA, subtopic
recall; see :mod:`evaluation.engine.intent_aware`), printed as ndeval prints them (CSV, one line per topic,
then ``amean``). Files only, no database."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from evaluation.engine.curves import ranked_docnos
from evaluation.engine.intent_aware import evaluate, parse_subtopic_qrels
from evaluation.management.files import one_line_errors
from workbench.formats import read_run
from workbench.management.errors import Error


def _cutoffs(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(k) for k in text.split(","))
    except ValueError:
        raise Error(f"--cutoffs {text!r}: whole numbers separated by commas, e.g. 5,10,20") from None
    if not values or min(values) < 1:
        raise Error(f"--cutoffs {text!r}: each cut-off must be at least 1")
    return values

#: manage.py runs this command without starting Django (files only: no database, no app; see manage.py)
STANDALONE = True


class Command(BaseCommand):
    help = "Diversity measures of a run against subtopic qrels (topic subtopic docno judgment), as ndeval."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("qrels", help="subtopic qrels: topic subtopic docno judgment")
        parser.add_argument("run", help="a TREC run")
        parser.add_argument("--alpha", type=float, default=0.5, help="redundancy intolerance (default 0.5)")
        parser.add_argument("--beta", type=float, default=0.5, help="patience, for NRBP (default 0.5)")
        parser.add_argument("--cutoffs", default="5,10,20", help="ranks for the @k measures (default 5,10,20)")
        parser.add_argument("-c", dest="complete", action="store_true",
                            help="average over every qrels topic (a topic the run lacks counts 0)")

    def handle(self, *args, **opts):
        cutoffs = _cutoffs(opts["cutoffs"])
        with one_line_errors():
            with open(opts["qrels"], encoding="utf-8", errors="replace") as handle:
                qrels = parse_subtopic_qrels(handle, name=opts["qrels"])
            run = read_run(opts["run"], name=opts["run"], max_depth=None, check_warnings=False,
                           trec_eval_rules=True)
            frame = run.frame
            rankings = ranked_docnos(frame["qid"].astype(str), frame["score"].tolist(), frame["docno"].tolist())
            results = evaluate(qrels, rankings, cutoffs=cutoffs, alpha=opts["alpha"], beta=opts["beta"],
                               complete=opts["complete"])
        if not results:
            raise Error("no topic is in both the qrels and the run")
        names = list(results["amean"])
        self.stdout.write(",".join(["runid", "topic", *names]))
        for topic, values in results.items():
            self.stdout.write(",".join([run.tag, topic, *(f"{values[m]:.6f}" for m in names)]))
