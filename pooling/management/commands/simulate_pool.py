import json
from dataclasses import replace

from pooling.management.commands._strategy_options import (
    add_gathered_options,
    add_param_options,
    gathered_objects,
    given_params,
)
from pooling.simulation import SIMULATED, Simulation, SimulationRefused, simulate_pool
from pooling.strategies import registry
from workbench.formats.qrels import read_qrels
from workbench.management.base import Error, WorkbenchCommand


def _gathered_params():
    """The parameters of the simulated strategies that build one object (cal's), with their strategies."""
    return [(p, users) for p, users in registry.parameters() if p.into is not None
            and any(u in SIMULATED for u in users)]


class Command(WorkbenchCommand):
    help = ("Replay a pooling strategy against known qrels (a simulated assessor answers from them): relevant "
            "documents found per topic at equal judgments, and where a stopping rule stopped.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--strategy", required=True, choices=SIMULATED)
        parser.add_argument("--qrels", required=True, help="qrels file the simulated assessor answers from")
        parser.add_argument("--budget", type=int, default=100, help="Judgments per topic (default 100)")
        parser.add_argument("--depth", type=int, default=100, help="Candidates depth of run-based strategies")
        parser.add_argument("--seed", type=int, default=0)
        # cal's parameters, from its declaration (not given: as --cal says, else as declared)
        add_param_options(parser.add_argument_group("cal parameters"), _gathered_params())
        add_gathered_options(parser)
        parser.add_argument("--runs", nargs="+", default=None, metavar="TAG",
                            help="Pool only these runs (default: the contributing runs)")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        if opts["budget"] < 1 or opts["depth"] < 1:
            raise Error("--budget and --depth must be at least 1")
        try:
            qrels = read_qrels(opts["qrels"])
        except OSError as exc:
            raise Error(f"{opts['qrels']}: cannot read ({exc.strerror or exc})") from None
        try:
            chosen = registry.get(opts["strategy"])
            values = given_params(opts, chosen, [p.name for p, _ in _gathered_params()])
            cal = gathered_objects(opts, values, chosen).get("cal")
            if cal is not None:  # the simulation's own budget and seed
                cal = replace(cal, budget=opts["budget"], seed=opts["seed"])
            rule = {"stop": cal.stop, "target_recall": cal.target_recall, "confidence": cal.confidence,
                    "sample_size": cal.sample_size} if cal else {}
            spec = Simulation(chosen.name, opts["budget"], opts["depth"], opts["seed"], cal=cal,
                              runs=tuple(opts["runs"]) if opts["runs"] else None, **rule)
            result = simulate_pool(collection=collection, qrels=qrels, spec=spec)
        except (SimulationRefused, ValueError) as exc:
            raise Error(str(exc)) from None
        if opts["format"] == "json":
            self.stdout.write(json.dumps(result, indent=None))
            return
        self._text(result)

    def _text(self, result):
        self.stdout.write(f"{'qid':>8} {'judged':>7} {'found':>6} {'relevant':>8} {'recall':>7}  stopped_at  claimed")
        for qid, t in result["topics"].items():
            recall = "-" if t["recall"] is None else f"{t['recall']:.3f}"
            claimed = "-" if t["claimed_recall"] is None else f"{t['claimed_recall']:.2f}"
            stopped = "-" if t["stopped_at"] is None else str(t["stopped_at"])
            self.stdout.write(f"{qid:>8} {t['judgments']:>7} {t['found']:>6} {t['relevant']:>8} {recall:>7}  "
                              f"{stopped:>10}  {claimed}")
        mean = "-" if result["mean_recall"] is None else f"{result['mean_recall']:.4f}"
        side = (f" ({result['review_judgments']} reviewed + {result['side_judgments']} sampled on the side)"
                if result["side_judgments"] else "")
        self.stdout.write(f"{result['strategy']}: mean recall {mean}, {result['found']} relevant found in "
                          f"{result['judgments']} judgments{side}")
        stopping = result.get("stopping")
        if stopping:
            self.stdout.write(f"{stopping['rule']}: stopped on {stopping['stopped']} of {stopping['topics']} topics; "
                              f"reached the target on {stopping['reached_target']}")
            for qid, reason in stopping["not_met"].items():
                self.stdout.write(f"topic {qid}: the rule could not be met ({reason})")
