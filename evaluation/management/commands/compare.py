"""``manage.py compare QRELS RUN RUN... [-m MEASURE]... [--test t|wilcoxon|sign|randomization|tukey]
[--correction holm|bonferroni|bh|none] [--alpha 0.05] [--format text|csv|json|latex]``: several runs on
several measures, each mean marked with the runs it is significantly better than (see
``evaluation.engine.compare``). Files as trec_eval reads them; no database needed."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from evaluation.engine import Evaluator, Qrels
from evaluation.engine.compare import COMPARE_TESTS, compare
from evaluation.engine.corrections import CORRECTIONS
from evaluation.engine.spec import parse_measures
from evaluation.management.files import one_line_errors
from workbench.formats import read_qrels_table, read_run_arrays
from workbench.management.errors import Error

#: manage.py runs this command without starting Django (files only: no database, no app; see manage.py)
STANDALONE = True


class Command(BaseCommand):
    help = ("Compare runs on several measures: a table of means, each marked with the runs it is "
            "significantly better than (paired tests with a correction, or Tukey's HSD).")
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("qrels")
        parser.add_argument("runs", nargs="+")
        parser.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                            help="trec_eval measure (repeatable; default: map ndcg_cut.10 P.10 recall.1000)")
        parser.add_argument("--test", choices=COMPARE_TESTS, default="t")
        parser.add_argument("--correction", choices=CORRECTIONS, default="holm")
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument("--format", choices=["text", "csv", "json", "latex"], default="text")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the randomisation test")

    def handle(self, *args, **opts):
        if len(opts["runs"]) < 2:
            raise Error("give at least two run files to compare")
        if not 0 < opts["alpha"] < 1:
            raise Error(f"--alpha {opts['alpha']}: between 0 and 1")
        requests = opts["measures"] or ["map", "ndcg_cut.10", "P.10", "recall.1000"]
        with one_line_errors():
            names = [n for m in parse_measures(requests) if m.spec.per_topic for n in m.names]
            qrels = Qrels.from_frame(read_qrels_table(opts["qrels"]))
            evaluator = Evaluator(qrels, requests, complete=True)
            per_topic = {}
            for path in opts["runs"]:
                run = read_run_arrays(path, name=path)
                tag = run.tag if run.tag not in per_topic else f"{run.tag} ({path})"
                per_topic[tag] = evaluator.evaluate(run, tag=tag).per_topic
        try:
            table = compare(per_topic, list(qrels.topics), names, test=opts["test"], correction=opts["correction"],
                            alpha=opts["alpha"], seed=opts["seed"])
        except ValueError as exc:  # a paired test on one topic: one line, not a traceback
            raise Error(str(exc)) from None
        self.stdout.write({"text": table.as_text, "csv": table.as_csv, "json": table.as_json,
                           "latex": table.as_latex}[opts["format"]](), ending="")
