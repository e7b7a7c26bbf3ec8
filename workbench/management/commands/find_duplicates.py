import json

from workbench.corpora.duplicates import duplicates_detect
from workbench.formats import neardup
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Find near-duplicate documents of a collection (exact duplicates by hash, then MinHash + LSH) and "
            "store them as proposed classes for the organizer to accept or split.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--threshold", type=float, default=neardup.DEFAULT_THRESHOLD,
                            help=f"Lowest estimated Jaccard similarity of shingles (default {neardup.DEFAULT_THRESHOLD})")
        parser.add_argument("--shingle", type=int, default=neardup.DEFAULT_SHINGLE,
                            help=f"Words per shingle (default {neardup.DEFAULT_SHINGLE})")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        if not collection.documents.exists():
            raise Error(f"collection {collection.slug!r} has no documents (import them with import_documents)")
        summary = duplicates_detect(collection=collection, threshold=opts["threshold"], shingle=opts["shingle"])
        if opts["format"] == "json":
            self.stdout.write(json.dumps([c.as_json() for c in summary.classes], indent=1))
            return
        for c in summary.classes:
            self.stdout.write(f"{c.representative}\t{c.similarity:.3f}\t{' '.join(c.members)}")
        members = sum(len(c.members) for c in summary.classes)
        self.stdout.write(f"{summary.documents:,} documents: {len(summary.classes):,} classes, {members:,} "
                          f"duplicates of a representative; stored as proposed in {collection.slug!r}"
                          + (f" ({summary.kept} decided classes kept)" if summary.kept else ""))
