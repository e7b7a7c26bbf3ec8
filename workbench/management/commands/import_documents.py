from workbench.collections.services import documents_import
from workbench.formats.catalog import formats_help
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = f"Import documents ({formats_help('documents')}; .gz accepted) into a collection, atomically."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--replace", action="store_true", help="Update documents whose docno exists")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        with self.progress(None, "doc", "documents") as bar:
            summary = documents_import(collection=collection, sources=opts["files"], replace=opts["replace"],
                                       progress=bar.update)
        self.stdout.write(f"imported {summary.created} documents into {collection.slug!r}"
                          + (f" ({summary.updated} updated)" if summary.updated else ""))
