"""What answers adds to a user's home page (:mod:`workbench.home_sections`): an assessor's nugget and support
tasks, one link per collection and kind with the number of topics given, to the collection's answer tasks
page; an organizer's answer pages (nugget assessors, answer leaderboard) of each collection they organize that
holds answer runs."""

from __future__ import annotations

from django.db.models import Count
from django.urls import reverse

from answers.models import AnswerPool, AnswerTask
from workbench.collections.selectors import organized_collections
from workbench.home_sections import TaskLink

__all__ = ["HOME_SECTIONS", "answer_tasks", "organizer_pages"]

_LABELS = {AnswerPool.Kind.NUGGET: "Nugget assignment", AnswerPool.Kind.SUPPORT: "Citation support"}


def answer_tasks(user) -> list[TaskLink]:
    """The user's answer tasks: (collection, kind) with the number of topics."""
    rows = (AnswerTask.objects.filter(assessor=user)
            .values("pool__collection__slug", "pool__collection__name", "pool__kind")
            .annotate(topics=Count("topic", distinct=True))
            .order_by("pool__collection__name", "pool__kind"))
    return [TaskLink(f"{_LABELS.get(r['pool__kind'], r['pool__kind'])} · {r['pool__collection__name']}",
                     reverse("answers:judge_tasks", args=[r["pool__collection__slug"]]), r["topics"], "topic")
            for r in rows]


def organizer_pages(user) -> list[TaskLink]:
    """The answer pages of each collection the user organizes that holds answer runs."""
    links = []
    collections = (organized_collections(user).annotate(answer_run_count=Count("answer_runs", distinct=True))
                   .filter(answer_run_count__gt=0).order_by("name"))
    for c in collections:
        tasks = AnswerTask.objects.filter(pool__collection=c).count()
        links.append(TaskLink(f"Nugget assessors · {c.name}", reverse("answers:nugget_assessors", args=[c.slug]),
                              tasks, "answer task"))
        links.append(TaskLink(f"Answer leaderboard · {c.name}", reverse("answers:leaderboard", args=[c.slug]),
                              c.answer_run_count, "answer run"))
    return links


HOME_SECTIONS = (answer_tasks, organizer_pages)
