from workbench.corpora.corpus import (
    CORPUS_FORMATS,
    command_location_refusal,
    corpus_reference_add,
    corpus_reference_index,
)
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Use a corpus by reference: the collection points to a documents file on this machine (TREC SGML, "
            "JSONL, TSV; .gz too; or Parquet), a BEIR folder's corpus.jsonl, or irds:ID (ir_datasets, from its local copy), "
            "indexed now by docno. Only pooled or opened documents are copied in.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("location", help="a documents file, a BEIR folder, or irds:ID")
        parser.add_argument("--format", choices=sorted(CORPUS_FORMATS), help="the file's format (default: detected)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        refusal = command_location_refusal(opts["location"])
        if refusal:
            raise Error(refusal)
        reference = corpus_reference_add(collection=collection, location=opts["location"], format=opts["format"])
        with self.progress(None, "doc", "indexing") as bar:
            try:
                count = corpus_reference_index(reference=reference, progress=bar.update)
            except Exception:
                reference.delete()  # nothing is left pointing to a corpus that cannot be read
                raise
        self.stdout.write(f"{reference.location}: {count:,} documents indexed ({reference.format}) for "
                          f"{collection.slug!r}; their text is copied in when pooled or opened")
