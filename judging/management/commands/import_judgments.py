"""``manage.py import_judgments SLUG FILE``: append the judgment records of a JSON-lines export (from
``export_judgments`` or a release bundle's ``judgments.jsonl``), all or none."""

from judging.exchange import judgments_import
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Import judgment records from JSON lines (export_judgments), keeping assessors, comments and revisions."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        summary = judgments_import(collection=collection, source=opts["file"])
        self.stdout.write(f"imported {summary.records} judgment records by {summary.assessors} assessors on "
                          f"{summary.topics} topics into {collection.slug!r}")
