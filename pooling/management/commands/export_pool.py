import io

from pooling.selectors import pool_named, pool_pairs
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Write the pool as lines 'qid docno', sorted by topic then document."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="main", help="Pool name (default: main)")
        parser.add_argument("-o", "--output", default=None)

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        pool = pool_named(collection, opts["name"])
        if pool is None:
            raise Error(f"collection {collection.slug!r} has no pool {opts['name']!r}")
        pairs = pool_pairs(pool)
        buffer = io.StringIO()
        for qid, docno in zip(pairs["qid"], pairs["docno"], strict=True):
            buffer.write(f"{qid} {docno}\n")
        if opts["output"]:
            with open(opts["output"], "w") as handle:
                handle.write(buffer.getvalue())
            self.stderr.write(f"wrote {len(pairs)} pooled documents to {opts['output']}")
        else:
            self.stdout.write(buffer.getvalue(), ending="")
