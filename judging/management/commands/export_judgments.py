"""``manage.py export_judgments SLUG [-o FILE]``: every judgment record (grades, "cannot judge", comments,
passages, time, assessor, revisions) as JSON lines (``judging.exchange``)."""

from judging.exchange import judgments_jsonl
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = "Write every judgment record of the collection as JSON lines (what assessors said, and when)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("-o", "--output", default=None, help="Output file (default: standard output)")

    def handle(self, *args, **opts):
        text = judgments_jsonl(self.get_collection(opts["slug"]))
        if not opts["output"]:
            self.stdout.write(text, ending="")
            return
        try:
            with open(opts["output"], "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise Error(f"{opts['output']}: cannot write it ({exc.strerror or exc})") from None
        self.stderr.write(f"wrote {text.count(chr(10))} judgment records to {opts['output']}")
