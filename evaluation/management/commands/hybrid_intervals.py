import json

from evaluation.hybrid_intervals import hybrid_intervals
from evaluation.scoring import EvaluationError
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Each run's measure under the hybrid qrels with an interval of what the machine-labelled pairs could "
            "change: qrels drawn from the per-topic calibrated probabilities (the human grades kept).")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--measure", default="map")
        parser.add_argument("--samples", type=int, default=50)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--level", type=float, default=0.9, help="The interval's coverage (default 0.9)")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        if not 1 <= opts["samples"] <= 10_000 or not 0 < opts["level"] < 1:
            raise Error("--samples must be between 1 and 10000 and --level between 0 and 1 (e.g. 0.9)")
        try:
            result = hybrid_intervals(collection, measure=opts["measure"], samples=opts["samples"], seed=opts["seed"],
                                      level=opts["level"])
        except (EvaluationError, ValueError) as exc:
            raise Error(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
        if opts["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
            return
        self.stdout.write(f"{result['measure']} under the hybrid qrels ({result['human_pairs']} human grades, "
                          f"{result['machine_pairs']} calibrated machine labels), {result['level']:.0%} interval "
                          f"over {result['samples']} draws:")
        for row in result["runs"]:
            self.stdout.write(f"  {row['run']}\t{row['value']:.4f}\t[{row['low']:.4f}, {row['high']:.4f}]")
