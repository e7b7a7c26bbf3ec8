"""`make demo`: the demo collection and its users, built once and kept on later runs.

The one module that may use every app (it installs data through pooling's and judging's services too);
``tests/test_architecture.py`` allows it and nothing else."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction

from judging.assignments import assignments_create
from judging.services import qrels_import
from pooling.services import pool_build
from workbench.demo.build import build_demo_files
from workbench.demo.judgments import JUDGED_TOPICS, write_qrels
from workbench.models import Collection
from workbench.people import person_set_roles
from workbench.services import RunSpec, collection_create, documents_import, runs_import, topics_import

DEMO_SLUG = "demo"
DEMO_PASSWORD = "demo"
DEMO_DEPTH = 10
DEMO_SEED = 2026
DEMO_OVERLAP_TOPICS = 3
#: The run left out of the pool, to show how pooling treats a run that did not contribute.
DEMO_LATE_RUN = "ql-dir"
#: The criteria the demo's pre-made judgments followed (workbench/demo/judgments.py), shown to assessors.
DEMO_SCALE = [
    {"grade": 0, "label": "Not relevant",
     "description": "Otherwise: what the narrative excludes, and near misses that only share the words."},
    {"grade": 1, "label": "Relevant",
     "description": "Partial or indirect: one step of the task, or a related tool the narrative names."},
    {"grade": 2, "label": "Highly relevant",
     "description": "By itself answers the narrative's need (csv.reader for reading a CSV file)."},
]
DEMO_GUIDELINES = """## Judging the demo

Each document is the docstring of one function, class or module of Python's standard library. Judge it
against the topic's **description and narrative**, not its title alone.

- **2, highly relevant**: this one object does what the narrative asks (`csv.reader` for "read a CSV file").
- **1, relevant**: it helps with part of the task (`smtplib.SMTP.ehlo` when sending e-mail), or it is a
  related tool the narrative names.
- **0, not relevant**: anything else, in particular near misses that share the topic's words
  (`shutil.move` when the topic is copying a directory tree).

Press **x** when the text does not let you decide (an empty docstring, say), and add a comment.
"""


@dataclass
class DemoReport:
    created: bool
    users: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


@transaction.atomic
def demo_users_ensure() -> list[str]:
    """The organizer (staff, so the admin works) and two assessors, each with the password "demo"."""
    names = []
    for username, is_organizer in [("organizer", True), ("assessor", False), ("assessor2", False)]:
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_password(DEMO_PASSWORD)
            user.is_staff = is_organizer
            user.is_superuser = is_organizer
            user.save()
            person_set_roles(user=user, roles=["organizer"] if is_organizer else ["assessor"])
        names.append(username)
    return names


@transaction.atomic
def demo_build() -> DemoReport:
    """Build the demo collection unless it exists; existing data is never touched."""
    report = DemoReport(created=False, users=demo_users_ensure())
    if Collection.objects.filter(slug=DEMO_SLUG).exists():
        report.lines.append(f"collection {DEMO_SLUG!r} exists: keeping its data")
        return report
    collection = collection_create(
        slug=DEMO_SLUG, name="Python standard library documentation", scale=DEMO_SCALE, relevant_from=1,
        description="Documents are the docstrings of the Python standard library; topics are programming "
                    "questions; runs come from BM25, TF-IDF and query-likelihood retrieval.",
        guidelines=DEMO_GUIDELINES)
    with tempfile.TemporaryDirectory() as tmp:
        files = build_demo_files(Path(tmp))
        topics = topics_import(collection=collection, source=files.topics)
        documents = documents_import(collection=collection, sources=[files.documents])
        runs = runs_import(collection=collection, specs=[
            RunSpec(source=run.path, team=run.team, description=run.description, pool_priority=priority,
                    contributes=run.tag != DEMO_LATE_RUN)
            for priority, run in enumerate(files.runs, start=1)])
        report.lines.append(f"collection {DEMO_SLUG!r}: {topics.created} topics, {documents.created} documents, "
                            f"{len(runs)} runs ({', '.join(r.run.tag for r in runs)}; {DEMO_LATE_RUN} does not "
                            "contribute to the pool)")
        report.lines.extend(_demo_pool_and_assignments(collection, Path(tmp)))
    report.created = True
    return report


def _demo_pool_and_assignments(collection: Collection, tmp: Path) -> list[str]:
    """A depth-10 pool over the contributing runs. The organizer's pre-made judgments cover topics
    7-30; topics 1-6 go to the two assessors, the first three to both so that agreement can be
    measured."""
    summary = pool_build(collection=collection, strategy="depth", depth=DEMO_DEPTH, seed=DEMO_SEED)
    qrels_path = tmp / "demo-organizer.qrels"
    write_qrels(qrels_path, known=set(collection.documents.values_list("docno", flat=True)))
    judged = qrels_import(collection=collection, source=qrels_path, assessor="organizer")
    assessors = list(User.objects.filter(username__in=["assessor", "assessor2"]).order_by("username"))
    open_topics = [q for q in sorted(collection.topics.values_list("qid", flat=True), key=int)
                   if q not in set(JUDGED_TOPICS)]
    shared, rest = open_topics[:DEMO_OVERLAP_TOPICS], open_topics[DEMO_OVERLAP_TOPICS:]
    assignments_create(pool=summary.pool, assessors=assessors, topics=shared, overlap=2)
    assignments_create(pool=summary.pool, assessors=assessors, topics=rest, overlap=1)
    return [f"pool {summary.pool}: depth {DEMO_DEPTH}, {summary.total} documents from {len(summary.runs)} runs",
            f"the organizer's judgments: {judged.created} on topics {JUDGED_TOPICS[0]}-{JUDGED_TOPICS[-1]}",
            f"assigned topics {', '.join(shared)} to both assessors and split topics {', '.join(rest)} "
            "between them"]
