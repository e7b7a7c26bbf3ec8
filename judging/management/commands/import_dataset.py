from judging.datasets import dataset_import
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Import a test collection from irds:ID (ir_datasets, read from its local copy under IR_DATASETS_HOME, "
            "never downloaded) or a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv): topics and qrels "
            "imported, the corpus used by reference (indexed now; only pooled or opened documents copied in).")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("location", help="irds:ID or a BEIR folder")
        parser.add_argument("--split", default="test", help="BEIR: the qrels file qrels/SPLIT.tsv (default: test)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        with self.progress(None, "doc", "indexing") as bar:
            summary = dataset_import(collection=collection, location=opts["location"], split=opts["split"],
                                     progress=bar.update)
        self.stdout.write(f"{opts['location']}: {summary.topics} topics, {summary.judgments} judgments imported into "
                          f"{collection.slug!r}; corpus {summary.reference.location} by reference "
                          f"({summary.documents:,} documents)")
