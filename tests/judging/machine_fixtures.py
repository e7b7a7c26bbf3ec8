"""A small collection whose documents have real text, for the machine judges' tests."""

from __future__ import annotations

from django.contrib.auth.models import Group, User

from judging.models import Assignment, AssignmentItem, Judgment
from pooling.models import Pool, PoolEntry
from tests import factories
from workbench.models import Document, Topic

TEXTS = {
    "301": ("international organized crime", {
        "c1": "Police in several countries broke up an international drug smuggling ring run by organized crime "
              "families, arresting forty people in Italy, Colombia and the United States.",
        "c2": "Interpol reports that transnational criminal organizations launder billions through banks.",
        "c3": "The mafia's grip on construction contracts in Sicily was the subject of a new trial.",
        "c4": "A recipe for lemon cake with a light glaze, ready in forty minutes.",
        "c5": "The football season opened with a surprising win for the home team.",
        "c6": "Gardening tips: how to prune roses in early spring.",
    }),
    "302": ("poliomyelitis and post-polio", {
        "p1": "Polio survivors decades later develop post-polio syndrome, with new muscle weakness and fatigue.",
        "p2": "The poliomyelitis vaccine campaign eradicated the disease in most countries.",
        "p3": "Stock markets rallied on Tuesday as technology shares rose.",
        "p4": "A new bridge opened across the river after three years of works.",
    }),
}


def machine_collection(slug: str = "mach", assessor: User | None = None):
    """Collection with topics 301, 302, documents with texts, pool 'main' over all of them, and the human
    ``assessor`` (if given) assigned topic 301 and having judged c1 (relevant) and c4 (not)."""
    collection = factories.collection_with_topics(slug=slug, grades=[
        {"grade": 0, "label": "Not relevant"}, {"grade": 1, "label": "Relevant"},
        {"grade": 2, "label": "Highly relevant"}])
    pool = Pool.objects.create(collection=collection, name="main", strategy="depth", params={"depth": 10})
    for qid, (title, docs) in TEXTS.items():
        topic = Topic.objects.get(collection=collection, qid=qid)
        topic.title = title
        topic.save(update_fields=["title"])
        for order, (docno, text) in enumerate(docs.items(), start=1):
            Document.objects.create(collection=collection, docno=docno, text=text, length=len(text.split()))
            PoolEntry.objects.create(pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order)
    Topic.objects.filter(collection=collection).exclude(qid__in=TEXTS).delete()
    if assessor is not None:
        assessor.groups.add(Group.objects.get_or_create(name="assessors")[0])
        topic = Topic.objects.get(collection=collection, qid="301")
        assignment = Assignment.objects.create(pool=pool, topic=topic, assessor=assessor)
        for order, docno in enumerate(TEXTS["301"][1], start=1):
            AssignmentItem.objects.create(assignment=assignment, docno=docno, judging_order=order)
        for docno, grade in (("c1", 2), ("c4", 0)):
            judgment = Judgment.objects.create(collection=collection, topic=topic, docno=docno, grade=grade,
                                               assessor=assessor.username, user=assessor)
            AssignmentItem.objects.filter(assignment=assignment, docno=docno).update(latest=judgment)
    return collection, pool
