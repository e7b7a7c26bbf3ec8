from answers.imports_nuggets import nuggets_export
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Print each topic's current nugget bank as nuggetizer's JSON lines (qid, query, nuggets)."

    def add_arguments(self, parser):
        parser.add_argument("slug")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        for line in nuggets_export(collection):
            self.stdout.write(line, ending="")
