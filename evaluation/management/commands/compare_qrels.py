import json

from django.core.management.base import CommandError

from evaluation.qrels_comparison import compare_sides, comparison_text, side_qrels
from evaluation.scoring import EvaluationError
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Compare two qrels of a collection as a meta-evaluator would: Cohen's kappa (binary and graded) with "
            "each side's share of relevant, Kendall's tau, tau_AP and top-10 tau of the runs' rankings, and the "
            "pairs of runs significantly different under one and swapped or tied under the other. A and B are "
            "qrels files, qrels policies (human, machine, ...), machine judges or assessors.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("a")
        parser.add_argument("b")
        parser.add_argument("--measure", default="map", help="The measure the runs are ranked by (default map)")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        try:
            a = side_qrels(collection, opts["a"], files=True)
            b = side_qrels(collection, opts["b"], files=True)
            result = compare_sides(collection, a, b, measure=opts["measure"])
        except (EvaluationError, ValueError) as exc:
            raise CommandError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
        if opts["format"] == "json":
            self.stdout.write(json.dumps(result.as_dict(), indent=2))
        else:
            self.stdout.write(comparison_text(result))
