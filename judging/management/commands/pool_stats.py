import json

from judging.qrels import qrels
from pooling.selectors import pool_named, pool_statistics
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Pool statistics as JSON: size per topic, unique contributions per run, run-to-run overlap, "
            "judged fraction and relevant documents found per depth.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="main", help="Pool name (default: main)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        pool = pool_named(collection, opts["name"])
        if pool is None:
            raise Error(f"collection {collection.slug!r} has no pool {opts['name']!r}")
        self.stdout.write(json.dumps(pool_statistics(pool, qrels(collection)), indent=2))
