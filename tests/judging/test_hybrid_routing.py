"""Routed queues follow the calibration as human judgments arrive: once the collection has REROUTE_EVERY new
human judgments since an organizer routed a pool, the next look at an assessor's queue routes it again."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from judging.models import Judgment, MachineJudge
from judging.queueing import REROUTE_EVERY
from judging.selectors import assessor_queue
from tests.judging.machine_fixtures import machine_collection
from workbench.models import Topic


@pytest.fixture
def routed(client, organizer, assessor):
    collection, pool = machine_collection(assessor=assessor)
    call_command("machine_judge", collection.slug, "--judge", "embedding", stdout=StringIO())
    client.force_login(organizer)
    assert client.post(reverse("judging:machine_route", args=[collection.slug]),
                       {"judge": "embedding", "pool": pool.pk, "audit_share": "0"}).status_code == 302
    return collection, pool


def _queue(pool):
    return [i.docno for i in pool.assignments.get().items.filter(latest__isnull=True).order_by("judging_order")]


def _scramble(pool):
    items = list(pool.assignments.get().items.filter(latest__isnull=True).order_by("judging_order"))
    slots = [i.judging_order for i in items]
    for item, slot in zip(items, reversed(slots), strict=True):
        item.judging_order = slot
        item.save(update_fields=["judging_order"])


def _human(collection, assessor, count, start=0):
    topic = Topic.objects.get(collection=collection, qid="302")
    for n in range(start, start + count):
        Judgment.objects.create(collection=collection, topic=topic, docno=f"x{n}", grade=0,
                                assessor=assessor.username, user=assessor)


def test_the_queue_is_routed_again_after_enough_new_human_judgments(routed, assessor):
    collection, pool = routed
    first = _queue(pool)
    assert MachineJudge.objects.get(name="embedding").config["routed"][str(pool.pk)]["audit_share"] == 0
    _scramble(pool)
    scrambled = _queue(pool)
    assert scrambled != first
    _human(collection, assessor, REROUTE_EVERY - 1)
    assessor_queue(assessor)
    assert _queue(pool) == scrambled  # not due yet
    _human(collection, assessor, 1, start=REROUTE_EVERY)
    assessor_queue(assessor)
    assert _queue(pool) == first  # routed again (refitted; judgments of pairs the machine did not label change nothing)
