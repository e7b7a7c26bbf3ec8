from judging.machine_import import FLAGGED_SAID, machine_labels_import
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Import a machine judge's labels made elsewhere (TREC qrels, or a CSV with a header: "
            "topic_id,doc_id,annotation,prob_yes,prob_no or topic_id,doc_id,prob_0,...,prob_k) as that machine "
            "assessor's judgments, with their provenance.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file")
        parser.add_argument("--judge", required=True, help="The machine judge's name (created the first time)")
        parser.add_argument("--model", default="", help="The model that made the labels (default: the judge's name)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        s = machine_labels_import(collection=collection, source=opts["file"], judge=opts["judge"], model=opts["model"])
        self.stdout.write(f"imported {s.recorded} labels ({s.format}) on {s.topics} topics into {collection.slug!r} "
                          f"as machine judge {s.judge!r}" + (f"; {s.already} already judged, kept" if s.already else "")
                          + (f"; {s.flagged} {FLAGGED_SAID}" if s.flagged else "") + f"; sha256 {s.sha256}")
