import json

from evaluation.summary import collection_summary
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Print a collection's counts as JSON."

    def add_arguments(self, parser):
        parser.add_argument("slug")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        self.stdout.write(json.dumps(collection_summary(collection), indent=2))
