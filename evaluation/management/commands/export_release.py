"""``manage.py export_release SLUG [--policy adjudicated|majority] [-o FILE]``: the release bundle (what the
downloads page builds as a job) written to a file, whole or not at all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from evaluation.release import release_bundle
from judging.policies import POLICIES, QRELS_POLICIES
from workbench.management.base import Error, WorkbenchCommand


class Command(WorkbenchCommand):
    help = ("Write the collection's release bundle (topics, qrels, pool, runs list, agreement, README with "
            "checksums) as a zip.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--policy", choices=QRELS_POLICIES, default=POLICIES.default,
                            help=f"The qrels' policy (default: {POLICIES.label(POLICIES.default)})")
        parser.add_argument("-o", "--output", default=None,
                            help="The zip to write (default: SLUG-release-DATE.zip in the current directory)")

    def handle(self, *args, **opts):
        collection = self.get_collection(opts["slug"])
        target = Path(opts["output"]) if opts["output"] else None
        if target is not None and target.is_dir():
            raise Error(f"{target}: is a directory; give the zip's file name")
        if target is not None and not target.parent.is_dir():
            raise Error(f"{target.parent}: no such directory")
        bundle = release_bundle(collection, policy=opts["policy"])
        target = target or Path(bundle.filename)
        try:  # written aside, then renamed into place: never a partial zip under the name asked for
            descriptor, aside = tempfile.mkstemp(dir=target.parent, prefix=".partial.")
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(bundle.data)
            os.replace(aside, target)
        except OSError as exc:
            raise Error(f"{target}: cannot write it ({exc.strerror or exc})") from None
        self.stdout.write(f"wrote {target} ({len(bundle.data):,} bytes, {len(bundle.files) + 1} files)")
