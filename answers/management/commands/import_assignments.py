from answers.imports_nuggets import assignments_import
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Import nugget assignments, nuggetizer's assign output ({\"qid\", \"run_id\", \"nuggets\": [{\"text\", "
            "\"importance\", \"assignment\"}]}), against each topic's current bank, as one assessor's.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file", metavar="FILE")
        parser.add_argument("--assessor", default=None, help="Who assigned them (default: the file's name)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        s = assignments_import(collection=collection, source=opts["file"], assessor=opts["assessor"])
        self.stdout.write(f"imported {s.created} nugget assignments on {s.answers} answers as {s.assessor!r}"
                          + (f", {s.revised} revised" if s.revised else "")
                          + (f", {s.unchanged} unchanged" if s.unchanged else ""))
