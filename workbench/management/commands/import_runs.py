from workbench.collections.services import RunSpec, runs_import
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Validate and import TREC run files (qid Q0 docno rank score tag) into a collection. "
            "All files are checked first; if any has a problem, nothing is imported.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--no-pool", action="store_true", help="The runs do not contribute to the pool")
        parser.add_argument("--team", default="", help="Team that submitted the runs")
        parser.add_argument("--description", default="")
        parser.add_argument("--priority", type=int, default=None,
                            help="Pool priority (1 = pooled first); default: the order of the files")
        parser.add_argument("--replace", action="store_true", help="Replace runs whose tag exists")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        specs = [
            RunSpec(source=path, team=opts["team"], description=opts["description"],
                    contributes=not opts["no_pool"],
                    pool_priority=opts["priority"] if opts["priority"] is not None else index + 1)
            for index, path in enumerate(opts["files"])
        ]
        with self.progress(2 * len(specs), "file", "runs (check, then store)") as bar:
            imported = runs_import(collection=collection, specs=specs, replace=opts["replace"], progress=bar.update)
        for item in imported:
            for warning in item.warnings:
                self.stderr.write(f"warning: {warning}")
            run = item.run
            pool = "offered to the pool" if run.contributes else "not offered to the pool"
            self.stdout.write(f"imported run {run.tag!r}: {run.num_entries} entries, {run.num_topics} topics, {pool}")
        self.stdout.write(f"imported {len(imported)} runs into {collection.slug!r}")
