from pathlib import Path

from workbench.demo.install import DEMO_PASSWORD, demo_build
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Build the demo collection and its users (kept as they are if they already exist); with --files, "
            "write the demo's files too (topics, documents, runs, qrels, answers), the ones the documented "
            "command-line examples use.")

    def add_arguments(self, parser):
        parser.add_argument("--files", metavar="DIR", default=None,
                            help="also write the demo's example files into DIR (created if missing)")

    def handle(self, *args, **opts):
        folder = Path(opts["files"]) if opts["files"] else None
        if folder is not None and folder.exists() and not folder.is_dir():
            raise Error(f"{folder}: not a folder")
        report = demo_build()
        for line in report.lines:
            self.stdout.write(line)
        self.stdout.write(f"users: {', '.join(report.users)} (password: {DEMO_PASSWORD!r})")
        if folder is not None:
            self.stdout.write(_write_files(folder))


def _write_files(folder: Path) -> str:
    """Write the demo's example files into ``folder``; the line saying what was written."""
    from workbench.demo.examples import write_example_files

    try:
        written = write_example_files(folder)
    except OSError as exc:
        raise Error(f"{folder}: cannot write the demo's files: {exc.strerror or exc}") from None
    runs = [n for n in written.names if n.startswith("runs/")]
    answers = [n for n in written.names if n.startswith("answers/")]
    others = [n for n in written.names if n not in runs and n not in answers]
    return (f"wrote {len(written.names)} files into {folder}/: {', '.join(others)}, runs/ ({len(runs)} runs), "
            f"answers/ ({len(answers)} answer runs)")
