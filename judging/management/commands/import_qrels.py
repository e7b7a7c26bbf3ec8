from judging.services import qrels_import
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Import TREC qrels (qid iter docno rel) as judgments by an assessor named after the source."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file")
        parser.add_argument("--assessor", default=None, help="Assessor name (default: qrels:FILENAME)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        summary = qrels_import(collection=collection, source=opts["file"], assessor=opts["assessor"])
        self.stdout.write(f"imported {summary.created} judgments on {summary.topics} topics into "
                          f"{collection.slug!r} as assessor {summary.assessor!r}"
                          + (f"; {summary.revised} revised" if summary.revised else "")
                          + (f"; {summary.unchanged} unchanged" if summary.unchanged else ""))
