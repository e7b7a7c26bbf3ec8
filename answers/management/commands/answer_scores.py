import json

from answers.release_files import score_lines
from answers.scores import SCORES, answer_scores
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Print the nugget scores of a collection's answer runs: one line per run and topic "
            '{"run", "qid", "strict_vital_score", "strict_all_score", "vital_score", "all_score"}, then the run\'s '
            'mean over its topics with "qid": "all" (json), or a table (text).')

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--run", action="append", default=None, metavar="TAG",
                            help="Only this answer run (repeat for more)")
        parser.add_argument("--assessor", default=None, help="Only this assessor's assignments count")
        parser.add_argument("--format", choices=["json", "text"], default="text")
        parser.add_argument("--all-columns", action="store_true",
                            help="Also support precision/recall, citation coverage and the flags")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        if opts["run"]:
            known = set(collection.answer_runs.values_list("tag", flat=True))
            unknown = [tag for tag in opts["run"] if tag not in known]
            if unknown:
                raise Error(f"no answer run {unknown[0]!r} in {collection.slug!r}")
        frame = answer_scores(collection, runs=opts["run"], assessor=opts["assessor"])
        if frame.empty:
            raise Error(f"no answer of {collection.slug!r} has nugget assignments: nothing to score")
        columns = [c for c in frame.columns] if opts["all_columns"] else ["run", "qid", *SCORES]
        for record in score_lines(frame, columns):  # the release bundle's answer_scores.jsonl, too
            self._write(record, opts["format"])

    def _write(self, record: dict, fmt: str) -> None:
        if fmt == "json":
            self.stdout.write(json.dumps(record))
            return
        self.stdout.write("\t".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in record.values()))
