"""``manage.py curves QRELS RUN [--kind pr|interpolated|roc] [--per-topic] [-l LEVEL] [--format tsv|csv|json]``:
the points of a run's precision-recall or ROC curve (see ``evaluation.engine.curves``); files as trec_eval
reads them, no database needed."""

from __future__ import annotations

import json
from collections import defaultdict

from django.core.management.base import BaseCommand

from evaluation.engine.curves import KINDS, curves
from evaluation.management.files import one_line_errors
from workbench.formats import read_qrels_table, read_run_arrays, spreadsheet

#: manage.py runs this command without starting Django (files only: no database, no app; see manage.py)
STANDALONE = True


class Command(BaseCommand):
    help = "Print the points of a run's precision-recall (non-interpolated or 11-point) or ROC curve."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("qrels")
        parser.add_argument("run")
        parser.add_argument("--kind", choices=KINDS, default="pr")
        parser.add_argument("--per-topic", action="store_true", help="Each topic's curve too, before the average")
        parser.add_argument("-l", "--level", type=int, default=1, help="Lowest relevant grade (default 1)")
        parser.add_argument("--format", choices=["tsv", "csv", "json"], default="tsv")

    def handle(self, *args, **opts):
        with one_line_errors():
            table = read_qrels_table(opts["qrels"])
            run = read_run_arrays(opts["run"], name=opts["run"])
            grades: dict[str, dict[str, int]] = defaultdict(dict)
            for qid, docno, rel in zip(table["qid"].to_pylist(), table["docno"].to_pylist(),
                                       table["rel"].to_pylist(), strict=True):
                grades[str(qid)][docno] = int(rel)
            rows = curves(grades, run, kind=opts["kind"], level=opts["level"], per_topic=opts["per_topic"])
        x, y = ("fpr", "tpr") if opts["kind"] == "roc" else ("recall", "precision")
        if opts["format"] == "json":
            self.stdout.write(json.dumps([{"topic": r["topic"], x: r["x"], y: r["y"]} for r in rows], indent=1))
            return
        writer = spreadsheet.writer(self.stdout, delimiter="\t" if opts["format"] == "tsv" else ",", lineterminator="\n")
        writer.writerow(["topic", x, y])
        for r in rows:
            writer.writerow([r["topic"], f"{r['x']:.4f}", f"{r['y']:.4f}"])
