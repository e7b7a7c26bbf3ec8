from pooling.params import stratum, topic_depths
from pooling.services import PoolRefused, pool_build, seed_from
from pooling.strategies import registry
from pooling.strategies.cal import CalParams
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Build a judgment pool from the collection's contributing runs, or extend it: building again "
            "with a deeper depth, more runs or more budget adds only the new documents.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--depth", type=int, default=None, help="Pool depth k (depth strategy; candidates "
                                                                      "depth for the others, default 100)")
        parser.add_argument("--topic-depth", nargs="+", default=None, metavar="QID=K",
                            help="Per-topic depth, e.g. 301=50 302=100 (topics not named get --depth)")
        parser.add_argument("--strategy", default="depth", choices=list(registry.STRATEGIES))
        parser.add_argument("--budget", type=int, default=None, help="Judgments per topic")
        parser.add_argument("--total-budget", type=int, default=None, help="Judgments over all topics")
        parser.add_argument("--runs", nargs="+", default=None, metavar="TAG",
                            help="Pool only these runs (default: every contributing run)")
        parser.add_argument("--runs-per-team", type=int, default=None,
                            help="Pool only each team's first N runs by their pool priority")
        parser.add_argument("--seed", type=int, default=None, help="Seed of the shuffle and of sampling "
                                                                  "(default: random, and recorded)")
        parser.add_argument("--order", choices=["shuffled", "pool"], default="shuffled",
                            help="Judging order: shuffled (default) or pool rank")
        parser.add_argument("--strata", nargs="+", default=None, metavar="FIRST-LAST:RATE",
                            help="Sampling strata, e.g. 1-10:1 11-100:0.1 (sampled strategy)")
        parser.add_argument("--shared", action="store_true",
                            help="Bandits: credit a judgment to every run that retrieved the document")
        parser.add_argument("--cal", nargs="+", default=[], metavar="KEY=VALUE",
                            help="cal: its parameters, e.g. stop=target target_recall=0.8 seed_depth=10 "
                                 "(growth, presumed, c, query_weight, confidence, sample_size)")
        parser.add_argument("--name", default="main", help="Pool name (default: main)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        try:
            strata = [stratum(s) for s in opts["strata"]] if opts["strata"] else None
            depth = topic_depths(opts["depth"], opts["topic_depth"], collection) if opts["topic_depth"] else opts["depth"]
            cal = CalParams.parse(opts["cal"]) if opts["cal"] else None
            summary = pool_build(collection=collection, name=opts["name"], strategy=opts["strategy"],
                                 depth=depth, budget=opts["budget"], total_budget=opts["total_budget"],
                                 tags=opts["runs"], runs_per_team=opts["runs_per_team"],
                                 seed=seed_from(opts["seed"]), order=opts["order"], strata=strata,
                                 shared=opts["shared"], cal=cal)
        except (PoolRefused, ValueError) as exc:
            raise Error(str(exc)) from None
        pool = summary.pool
        self.stdout.write(f"pool {pool} ({pool.strategy}, seed {pool.seed}, {pool.order} order): added "
                          f"{summary.added} documents in round {summary.round}; {summary.total} documents on "
                          f"{summary.topics} topics {summary.runs_text()}")
        from pooling.tasks import copy_in_pooled

        for line in copy_in_pooled(collection, pool, None):
            self.stdout.write(line)
