from answers.imports_nuggets import nuggets_import
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = ('Import nugget banks in nuggetizer\'s JSON lines ({"qid", "query", "nuggets": [{"text", "importance"}]}): '
            "each changed topic gets a new bank version; any problem refuses the whole file.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file", metavar="FILE")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        summary = nuggets_import(collection=collection, source=opts["file"])
        self.stdout.write(f"imported {summary.versions} new bank versions ({summary.nuggets} nuggets) into "
                          f"{collection.slug!r}; {summary.unchanged} topics unchanged")
