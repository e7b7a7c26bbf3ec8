"""`make demo`: the demo collection and its users, built once and kept on later runs.

The one module that may use every app (it installs data through pooling's and judging's services too);
``tests/test_architecture.py`` allows it and nothing else."""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from django.contrib.auth.models import User
from django.core.files import File
from django.db import transaction
from django.utils import timezone

from answers.imports import answers_import
from answers.imports_nuggets import assignments_import, nuggets_import
from answers.pools import answer_pool_build, answer_tasks_assign, cited_pool_build
from judging.assignments import assignments_create
from judging.services import qrels_import
from participation.models import Submission, Team, Track
from participation.services import results_release, submission_check, submission_receive
from pooling.services import pool_build
from workbench.access.people import person_set_roles
from workbench.collections.services import collection_create, documents_import, run_update, topics_import
from workbench.demo import answers as demo_answers
from workbench.demo.build import DemoFiles, DemoRun, build_demo_files
from workbench.demo.judgments import JUDGED_TOPICS, write_qrels
from workbench.demo.runs import DEPTH
from workbench.models import Collection

DEMO_SLUG = "demo"
DEMO_PASSWORD = "demo"
DEMO_DEPTH = 10
DEMO_SEED = 2026
DEMO_OVERLAP_TOPICS = 3
#: The run left out of the pool, to show how pooling treats a run that did not contribute.
DEMO_LATE_RUN = "ql-dir"
#: Each demo user and its role; the participant is a member of DEMO_TEAM, one of the demo track's teams.
DEMO_USERS = (("organizer", "organizer"), ("assessor", "assessor"), ("assessor2", "assessor"),
              ("participant", "participant"), ("researcher", "researcher"))
DEMO_TEAM = "okapi"
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
    """The organizer (staff, so the admin works), two assessors, a participant and a researcher, each with
    the password "demo"."""
    names = []
    for username, role in DEMO_USERS:
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_password(DEMO_PASSWORD)
            user.is_staff = user.is_superuser = role == "organizer"
            user.save()
            person_set_roles(user=user, roles=[role])
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
    collection.organizers.add(*User.objects.filter(username__in=[u for u, role in DEMO_USERS if role == "organizer"]))
    with tempfile.TemporaryDirectory() as tmp:
        files = build_demo_files(Path(tmp))
        topics = topics_import(collection=collection, source=files.topics)
        documents = documents_import(collection=collection, sources=[files.documents])
        track = _demo_track(collection, files.runs)
        report.lines.append(f"collection {DEMO_SLUG!r}: {topics.created} topics, {documents.created} documents, "
                            f"{len(files.runs)} runs ({', '.join(r.tag for r in files.runs)}; {DEMO_LATE_RUN} "
                            "does not contribute to the pool)")
        report.lines.extend(_demo_pool_and_assignments(collection, Path(tmp)))
        report.lines.extend(_demo_answers(collection, Path(tmp), files))
    results_release(track=track)
    report.lines.append(f"track {DEMO_SLUG!r}: open for 30 days, topics published, results released; "
                        f"{track.teams.count()} teams submitted the runs; 'participant' is in team {DEMO_TEAM!r}")
    report.created = True
    return report


def _demo_track(collection: Collection, runs: list[DemoRun]) -> Track:
    """The demo as a shared task: a track open for 30 more days with its topics published, to which each
    run's team submitted it, checked as any participant's submission is (the participant in team
    DEMO_TEAM); the organizer then sets the pool priority in the runs' order and leaves DEMO_LATE_RUN out of
    the pool. Its results are released once judged, with an anonymous leaderboard."""
    track = Track.objects.create(collection=collection, open=True, closes_at=timezone.now() + timedelta(days=30),
                                 max_runs_per_team=5, pooled_runs_per_team=3, depth=DEPTH, topics_published=True,
                                 leaderboard=Track.Leaderboard.ANONYMOUS)
    participant = User.objects.get(username="participant")
    submitted: Counter = Counter()
    for priority, run in enumerate(runs, start=1):
        team, new = Team.objects.get_or_create(track=track, name=run.team)
        if new and run.team == DEMO_TEAM:
            team.members.add(participant)
        submitted[run.team] += 1
        with run.path.open("rb") as handle:
            submission = submission_receive(
                team=team, user=participant if run.team == DEMO_TEAM else None, upload=File(handle, run.path.name),
                fields_used=run.query_fields, description=run.description, priority=submitted[run.team])
        submission = submission_check(submission)
        if submission.status != Submission.Status.ACCEPTED:
            raise RuntimeError(f"the demo's run {run.tag} was refused: {'; '.join(submission.problems)}")
        run_update(run=submission.run, pool_priority=priority, contributes=run.tag != DEMO_LATE_RUN)
    collection.researchers_may_download = True
    collection.save(update_fields=["researchers_may_download"])
    return track


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


def _demo_answers(collection: Collection, tmp: Path, files: DemoFiles) -> list[str]:
    """The answer track (``workbench.demo.answers``): four answer runs on topics 1-14, nugget banks for topics
    7-14 with the organizer's assignments, the cited segments pooled, and the nugget pool's topics 7-9 given to
    both assessors (so that they can compare their assignments with the organizer's)."""
    documents = {d.docno: (d.title, d.text) for d in collection.documents.only("docno", "title", "text")}
    topics = list(collection.topics.values("qid", "title", "description"))
    answer_files = demo_answers.write_answer_runs(tmp, documents, {r.tag: r.path for r in files.runs},
                                                  {r.tag: r.team for r in files.runs}, topics)
    imported = answers_import(collection=collection, sources=answer_files)
    banks = demo_answers.write_nugget_banks(tmp / "nuggets.jsonl", documents, topics)
    nuggets_import(collection=collection, source=tmp / "nuggets.jsonl")
    demo_answers.write_assignments(tmp / "assignments.jsonl", answer_files, banks)
    assigned = assignments_import(collection=collection, source=tmp / "assignments.jsonl", assessor="organizer")
    cited = cited_pool_build(collection=collection, seed=DEMO_SEED)
    nugget_pool = answer_pool_build(collection=collection, kind="nugget", seed=DEMO_SEED).pool
    answer_pool_build(collection=collection, kind="support", seed=DEMO_SEED)
    assessors = list(User.objects.filter(username__in=["assessor", "assessor2"]).order_by("username"))
    answer_tasks_assign(pool=nugget_pool, assessors=assessors, overlap=2, topics=["7", "8", "9"])
    return [f"answer runs: {', '.join(i.run.tag for i in imported)} on topics 1-14; nugget banks for "
            f"{len(banks)} topics; {assigned.created} nugget assignments by the organizer; cited segments pooled "
            f"as {cited.pool.name!r} ({cited.total} documents); nugget topics 7-9 given to both assessors"]
