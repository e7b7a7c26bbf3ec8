import json
import math

from judging.machine_agreement import machine_agreement
from judging.models import MachineJudge
from workbench.management.base import Error, WorkbenchCommand

KEYS = ["pairs", "topics", "kappa_binary", "kappa_weighted", "auc", "tau", "tau_ap", "tau_top10", "runs"]


def _clean(value):
    return None if isinstance(value, float) and math.isnan(value) else value


class Command(WorkbenchCommand):
    help = ("A machine judge's agreement with the human judgments, on topics its calibration did not see: "
            "kappa (binary, weighted), AUC, confusion matrix, Kendall's tau and tau_ap of the run rankings.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--judge", required=True, metavar="NAME")
        parser.add_argument("--format", choices=["text", "json"], default="text")
        parser.add_argument("--folds", type=int, default=2, help="Topic folds of the cross-validation (default 2)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        judge = MachineJudge.objects.filter(collection=collection, name=opts["judge"]).first()
        if judge is None:
            names = ", ".join(collection.machine_judges.values_list("name", flat=True)) or "none yet (run machine_judge)"
            raise Error(f"collection {collection.slug!r} has no machine judge {opts['judge']!r}; its judges: {names}")
        if opts["folds"] < 2:
            raise Error("--folds must be at least 2")
        figures = machine_agreement(judge, folds=opts["folds"])
        if opts["format"] == "json":
            out = {key: _clean(figures[key]) for key in KEYS}
            out["confusion"], out["grades"] = figures["confusion"], figures["grades"]
            self.stdout.write(json.dumps(out))
            return
        for key in KEYS:
            value = figures[key]
            self.stdout.write(f"{key:15} {'not enough data' if _clean(value) is None else round(value, 4)}")
