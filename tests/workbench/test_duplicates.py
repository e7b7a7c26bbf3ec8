"""Near-duplicate classes of a collection: the job, the find_duplicates command, the organizer's decisions."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from workbench.corpora.duplicates import duplicates_detect
from workbench.jobs import lifecycle as jobs
from workbench.models import Document, DuplicateClass, Job
from workbench.tasks import find_duplicates

BASE = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty and some more words to make a passage of thirty")


def with_texts(collection, texts: dict[str, str]) -> None:
    Document.objects.bulk_create([Document(collection=collection, docno=d, text=t) for d, t in texts.items()])


@pytest.fixture
def planted(collection):
    with_texts(collection, {"D1": BASE, "D2": BASE.upper() + ".", "D3": BASE.replace("twelve", "dozen"),
                            "D4": "an unrelated passage about the weather in spring and rain",
                            "D5": "bz2 read returns the bytes of the file read from the start"})
    return collection


def test_find_duplicates_prints_the_classes_as_json_and_stores_them_as_proposed(planted):
    out = StringIO()
    call_command("find_duplicates", planted.slug, "--format", "json", stdout=out)
    classes = json.loads(out.getvalue())
    assert classes[0]["representative"] == "D1" and classes[0]["members"] == ["D2", "D3"]
    assert 0.7 <= classes[0]["similarity"] < 1
    stored = DuplicateClass.objects.get(collection=planted)
    assert stored.status == "proposed" and sorted(stored.members.values_list("docno", flat=True)) == ["D2", "D3"]


def test_a_stricter_threshold_keeps_only_the_exact_copy(planted):
    out = StringIO()
    call_command("find_duplicates", planted.slug, "--threshold", "1", "--format", "json", stdout=out)
    assert json.loads(out.getvalue()) == [{"representative": "D1", "members": ["D2"], "similarity": 1.0}]


@pytest.mark.parametrize("args, says", [(["nope"], "no collection 'nope'"),
                                        (["robust", "--threshold", "2"], "threshold must be above 0")])
def test_find_duplicates_refuses_bad_input_in_one_line(planted, args, says):
    with pytest.raises(CommandError) as refused:
        call_command("find_duplicates", *args)
    assert says in str(refused.value) and "\n" not in str(refused.value)


def test_detection_runs_as_a_job_and_keeps_classes_the_organizer_decided(planted, organizer):
    duplicates_detect(collection=planted)
    DuplicateClass.objects.filter(collection=planted).update(status="accepted")
    Document.objects.create(collection=planted, docno="D6", text=BASE + " sixteen")
    job = jobs.job_start(find_duplicates, kind="near-duplicates", user=organizer, collection=planted,
                         params={"threshold": 0.7, "shingle": 3})
    job = Job.objects.get(pk=job.pk)
    assert job.status == "done", job.error
    assert "classes proposed" in job.result["lines"][0] and "1 classes already decided were kept" in job.result["lines"]
    assert list(DuplicateClass.objects.filter(collection=planted).values_list("representative", "status")) == [
        ("D1", "accepted")]  # D6 is like D1, but D1's class was decided: D6 is left for the organizer to judge
