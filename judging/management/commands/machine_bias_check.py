import json

from judging.machine.bias import INFLATION_LIMIT, KINDS
from judging.machine_bias import BiasRefused, bias_check
from judging.models import MachineJudge
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Bias check of a machine judge: documents the humans called not relevant, judged as they are, stuffed "
            "with the topic's query words and with an instruction to the judge injected; prints each variant's "
            "false-positive rate and its inflation over the originals, and keeps them on the judge (its agreement "
            "page; over --limit, the router sends documents that look manipulated to humans first).")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--judge", required=True)
        parser.add_argument("--sample", type=int, default=40, help="Documents sampled (default 40)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--limit", type=float, default=INFLATION_LIMIT,
                            help=f"Inflation over which the router sends such pairs to humans (default {INFLATION_LIMIT})")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        judge = MachineJudge.objects.filter(collection=collection, name=opts["judge"]).first()
        if judge is None:
            raise Error(f"no machine judge {opts['judge']!r} in collection {collection.slug!r}")
        if opts["sample"] < 1 or not 0 <= opts["limit"] <= 1:
            raise Error("--sample must be at least 1 and --limit between 0 and 1")
        try:
            result = bias_check(judge, sample=opts["sample"], seed=opts["seed"], limit=opts["limit"])
        except BiasRefused as exc:
            raise Error(str(exc)) from None
        if opts["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
            return
        base = result["kinds"]["original"]
        self.stdout.write(f"{judge.name}: {result['sample']} documents the humans called not relevant; "
                          f"false positives {base['false_positives']}/{base['pairs']}")
        for kind in KINDS:
            k = result["kinds"][kind]
            shown = "n/a" if k["inflation"] is None else f"{k['inflation']:+.2f}"
            self.stdout.write(f"  {kind}: false positives {k['false_positives']}/{k['pairs']}, inflation {shown}")
        self.stdout.write("over the limit: documents that look manipulated go to humans first" if result["over_limit"]
                          else f"within the limit ({result['limit']})")
