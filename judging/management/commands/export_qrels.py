import io

from judging import qrels as judged
from workbench.formats import write_qrels
from workbench.management.base import WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Write the collection's qrels in TREC format (qid 0 docno rel), sorted by qid then docno."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--assessor", default=None,
                            help="One assessor's grades (default: adjudicated, else majority)")
        parser.add_argument("--policy", choices=judged.QRELS_POLICIES, default=judged.POLICIES.default,
                            help="Without --assessor: the assessors' majority, with adjudicated grades "
                                 "replacing it where they exist (adjudicated, default), or the majority alone")
        parser.add_argument("-o", "--output", default=None, help="Output file (default: standard output)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        frame = judged.qrels(collection, assessor=opts["assessor"], policy=opts["policy"])
        if opts["output"]:
            write_qrels(frame, opts["output"])
            self.stderr.write(f"wrote {len(frame)} judgments on {frame['qid'].nunique()} topics to {opts['output']}")
        else:
            buffer = io.StringIO()
            write_qrels(frame, buffer)
            self.stdout.write(buffer.getvalue(), ending="")
