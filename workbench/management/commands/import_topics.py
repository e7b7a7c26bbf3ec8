from workbench.collections.services import topics_import
from workbench.formats.catalog import formats_help
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = f"Import topics ({formats_help('topics')}; .gz accepted) into a collection."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file")
        parser.add_argument("--replace", action="store_true", help="Update topics whose qid already exists")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        summary = topics_import(collection=collection, source=opts["file"], replace=opts["replace"])
        self.stdout.write(f"imported {summary.created} topics into {collection.slug!r}"
                          + (f" ({summary.updated} updated)" if summary.updated else ""))
