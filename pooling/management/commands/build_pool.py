import time

from pooling.management.commands._strategy_options import (
    add_gathered_options,
    add_param_options,
    gathered_objects,
    given_params,
)
from pooling.params import topic_depths
from pooling.services import PoolRefused, pool_build, seed_from
from pooling.strategies import registry
from pooling.tasks import copy_in_pooled
from workbench.management.base import Error, WorkbenchCommand

#: the parameters ``pool_build`` takes by name; a strategy's others go in its ``options``
COMMON = {"depth", "topic_depth", "budget", "total_budget", "strata", "shared"}


class Command(WorkbenchCommand):
    help = ("Build a judgment pool from the collection's contributing runs, or extend it: building again "
            "with a deeper depth, more runs or more budget adds only the new documents.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--strategy", default=registry.names()[0], choices=registry.names())
        parser.add_argument("--name", default="main", help="Pool name (default: main)")
        parser.add_argument("--runs", nargs="+", default=None, metavar="TAG",
                            help="Pool only these runs (default: every contributing run)")
        parser.add_argument("--runs-per-team", type=int, default=None,
                            help="Pool only each team's first N runs by their pool priority")
        parser.add_argument("--seed", type=int, default=None, help="Seed of the shuffle and of sampling "
                                                                  "(default: random, and recorded)")
        parser.add_argument("--order", choices=["shuffled", "pool"], default="shuffled",
                            help="Judging order: shuffled (default) or pool rank")
        # each strategy's parameters, from its declaration (the strategies that read one in brackets)
        add_param_options(parser.add_argument_group("strategy parameters"), registry.parameters())
        add_gathered_options(parser)

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        chosen = registry.get(opts["strategy"])
        started = time.monotonic()
        try:
            values = given_params(opts, chosen)
            depth = values.get("depth")
            if values.get("topic_depth"):
                depth = topic_depths(depth, values["topic_depth"], collection)
            objects = gathered_objects(opts, values, chosen)
            with self.progress(1, "stage", f"pool {opts['name']} ({chosen.name})") as shown:
                if not shown.terminal:  # the bar shows the time it takes; a pipe gets where it starts
                    self.stdout.write(f"0% pool {opts['name']}: reading the runs, pooling with {chosen.name} and "
                                      "writing the entries")
                summary = pool_build(collection=collection, name=opts["name"], strategy=chosen.name,
                                     depth=depth, budget=values.get("budget"), total_budget=values.get("total_budget"),
                                     tags=opts["runs"], runs_per_team=opts["runs_per_team"],
                                     seed=seed_from(opts["seed"]), order=opts["order"], strata=values.get("strata"),
                                     shared=bool(values.get("shared")), **objects,
                                     options={p.name: values[p.name] for p in chosen.params
                                              if p.into is None and p.name in values and p.name not in COMMON} or None)
                shown.report(f"pool {opts['name']}: {summary.added:,} documents added", 1)
        except (PoolRefused, ValueError) as exc:
            raise Error(str(exc)) from None
        copied = self._copy_in(collection, summary.pool)
        pool = summary.pool
        self.stdout.write("; ".join([
            f"pool {pool} ({pool.strategy}, seed {pool.seed}, {pool.order} order): added {summary.added} documents "
            f"in round {summary.round}; {summary.total} documents on {summary.topics} topics {summary.runs_text()}",
            *copied]) + f"; {time.monotonic() - started:.1f} s")

    def _copy_in(self, collection, pool) -> list[str]:
        """The pooled documents' text copied in from a corpus used by reference, shown by document."""
        with self.progress(None, "document", "copying in the pooled documents' text") as shown:
            return copy_in_pooled(collection, pool, _Steps(shown))


class _Steps:
    """A job's ``step(text, done=, total=)`` (what :func:`pooling.tasks.copy_in_pooled` reports to) shown by a
    command's progress."""

    def __init__(self, shown) -> None:
        self.shown = shown

    def step(self, text: str, *, done: int | None = None, total: int | None = None) -> None:
        self.shown.report(text, done or 0, total)
