"""The import of many run files split into parts any worker claims (``JOB_PARTS``): each part reads, checks,
encodes and stores its own slice of the files in a staging collection nobody sees, the join moves them all
into their collection in one transaction; the runs, the job's lines and
warnings, and every refusal are those of one worker, and the staged upload is gone whatever the outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import factories
from tests.split_jobs import DB_TASKS, assert_each_part_done_once, kill_worker_of, run_worker
from workbench import tasks as workbench_tasks
from workbench.collections import files as store
from workbench.collections import runstore
from workbench.collections.services import collection_create
from workbench.jobs import subjobs
from workbench.models import Collection, Job, Run, Topic
from workbench.tasks import start_runs_import

QIDS = [str(q) for q in range(1, 6)]
HEADER = ("# ir_metadata.start\n# tag: r1\n# actor:\n#   team: header-team\n# method:\n#   automatic: false\n"
          "# description: from the header\n# ir_metadata.end\n")
MANIFEST = "tag,team,contributes,priority,type,description\nr0,uni-a,yes,1,automatic,BM25\nr5,uni-b,no,2,,\n"


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    return settings.VAR_DIR


def _track(slug: str):
    collection = collection_create(slug=slug)
    Topic.objects.bulk_create(Topic(collection=collection, qid=q, title=f"topic {q}") for q in QIDS)
    return collection


def _write(folder: Path, count: int = 8, tags: dict[int, str] | None = None,
           lines: dict[int, str] | None = None) -> list[Path]:
    """``count`` run files of different sizes (file i: tag ``r<i>``, or ``tags[i]``; ``lines[i]`` appended);
    r1 has an ir_metadata header, r2 a rank column against its scores (a warning)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        tag = (tags or {}).get(i, f"r{i}")
        text = factories.run_lines(tag, {q: [f"{tag}-d{q}-{k}" for k in range(3 + 7 * (i % 3))] for q in QIDS})
        if i == 1:
            text = HEADER + text
        if i == 2:  # on topic 1, rank 2 scores higher than rank 1
            text = f"1 Q0 first 1 1.0 {tag}\n1 Q0 second 2 2.0 {tag}\n" + text.split("\n", 1)[1]
        paths.append(folder / f"r{i}.run")
        paths[-1].write_text(text + (lines or {}).get(i, ""))
    return paths


def _import(collection, paths, settings, parts: int, **options) -> Job:
    settings.JOB_PARTS = parts
    job = start_runs_import(collection, paths, **options)
    job.refresh_from_db()
    return job


def _stored(collection) -> list[tuple]:
    """Every run of the collection (in the order stored) with its stored table, decoded."""
    return [(r.tag, r.team, r.description, r.contributes, r.pool_priority, r.run_type, r.num_topics, r.num_entries,
             r.source_file, r.sha256, runstore.decode(r.data.table).to_dict("list"))
            for r in Run.objects.filter(collection=collection).select_related("data").order_by("pk")]


def _gone(var_dir: Path, job: Job) -> bool:
    """The job's staged upload and its parts' outputs are removed."""
    staged = [p for p in (var_dir / "uploads").glob("*") if p.name != "tmp"]
    return (not staged and not store.list_tree(subjobs.parts_folder(job))
            and not Collection.all_objects.filter(staging=True).exists())  # nor the runs the parts stored


def _files_of(job: Job) -> list[list[str]]:
    return [p["files"] for p in job.parts.order_by("pk").values_list("params", flat=True)]


@pytest.mark.django_db
@pytest.mark.parametrize("parts", [2, 3])
def test_a_split_import_stores_the_runs_and_says_what_one_worker_says(tmp_path, settings, var_dir, parts):
    paths = _write(tmp_path / "runs")
    (tmp_path / "manifest.csv").write_text(MANIFEST)
    options = {"manifest": tmp_path / "manifest.csv", "team": "lab", "contributes": True, "pool_priority": 3,
               "description": "given"}
    whole = _import(_track("one"), paths, settings, 1, **options)
    assert (whole.status, whole.error, whole.parts.count()) == (Job.Status.DONE, "", 0)
    job = _import(_track("split"), paths, settings, parts, **options)
    assert (job.status, job.error) == (Job.Status.DONE, "")
    assert job.result == whole.result  # the same lines and warnings, in the same order
    assert job.result["warnings"][0].startswith("r2.run:2: the rank column disagrees")
    stored = _stored(job.collection)
    assert stored == _stored(whole.collection)
    assert [s[:6] for s in stored[:3]] == [("r0", "uni-a", "BM25", True, 1, "automatic"),
                                           ("r1", "header-team", "from the header", True, 3, "manual"),
                                           ("r2", "lab", "given", True, 3, "")]
    assert stored[5][:5] == ("r5", "uni-b", "given", False, 2)
    # parts: contiguous slices of the files, in the order given, each of about the same bytes
    assert (job.done, job.total, job.parts.count()) == (whole.done, whole.total, parts) == (16, 16, parts)
    assert set(job.parts.values_list("status", flat=True)) == {Job.Status.DONE}
    slices = _files_of(job)
    assert [original for files in slices for _, original in files] == [p.name for p in paths]
    sizes = [sum((tmp_path / "runs" / o).stat().st_size for _, o in files) for files in slices]
    largest = max(p.stat().st_size for p in paths)
    assert all(abs(size - sum(sizes) / parts) <= largest for size in sizes)
    assert _gone(var_dir, job) and _gone(var_dir, whole)


def _refusal(tmp_path, settings, parts: int, collection=None, **write) -> tuple[Job, Job]:
    """One worker's refusal and the split import's, of the same files into the same collection (nothing stored)."""
    paths = _write(tmp_path / "runs", **write)
    collection = collection or _track("track")
    whole = _import(collection, paths, settings, 1)
    job = _import(collection, paths, settings, parts)
    assert job.parts.count() == parts
    return whole, job


@pytest.mark.django_db
@pytest.mark.parametrize(("bad", "first"), [
    ({6: "2 Q0 dx x 1.0 r6\n"}, "r6.run:16: rank 'x' is not an integer"),
    ({1: "2 Q0 dx 1 1.0 other\n", 6: "2 Q0 dx x 1.0 r6\n9 Q0 dy 1 1.0 r6\n"},
     "r1.run:59: run tag 'other' differs from 'r1' (line 9): a file holds exactly one run"),
])
def test_a_bad_line_in_a_part_refuses_the_import_as_one_worker_does(tmp_path, settings, var_dir, bad, first):
    whole, job = _refusal(tmp_path, settings, 2, lines=bad)
    assert (job.status, job.error, job.result) == (Job.Status.FAILED, whole.error, whole.result)
    assert job.error.startswith(first)
    assert whole.result["problems"][0] == first
    assert "r6.run:16: rank 'x' is not an integer" in job.result["problems"]
    assert [files[-1][1] for files in _files_of(job)][0] < "r6.run"  # r6 is in the second part
    assert not Run.objects.exists()
    assert _gone(var_dir, job) and _gone(var_dir, whole)


@pytest.mark.django_db
def test_a_tag_given_by_files_of_two_parts_is_refused_as_one_worker_does(tmp_path, settings, var_dir):
    whole, job = _refusal(tmp_path, settings, 2, tags={0: "twice", 7: "twice"})
    assert (job.status, job.error, job.result) == (Job.Status.FAILED, whole.error, whole.result)
    assert job.error == "run tag 'twice' appears in more than one file"
    assert not Run.objects.exists()
    assert _gone(var_dir, job)


@pytest.mark.django_db
def test_a_manifest_naming_no_uploaded_run_is_refused_as_one_worker_does(tmp_path, settings, var_dir):
    (tmp_path / "manifest.csv").write_text("tag,team\nr0,uni-a\nzz,uni-z\n")
    paths, collection = _write(tmp_path / "runs"), _track("track")
    whole = _import(collection, paths, settings, 1, manifest=tmp_path / "manifest.csv")
    job = _import(collection, paths, settings, 2, manifest=tmp_path / "manifest.csv")
    assert (job.status, job.error, job.result) == (Job.Status.FAILED, whole.error, whole.result)
    assert job.error.startswith("manifest.csv:3: run tag 'zz' is not among the uploaded runs (r0, r1,")
    assert not Run.objects.exists() and _gone(var_dir, job)


@pytest.mark.django_db
def test_a_run_already_there_is_refused_as_one_worker_does_and_replaced_when_asked(tmp_path, settings, var_dir):
    collection = _track("track")
    _import(collection, _write(tmp_path / "first", count=1), settings, 1)
    whole, job = _refusal(tmp_path, settings, 2, collection=collection)
    assert (job.status, job.error, job.result) == (Job.Status.FAILED, whole.error, whole.result)
    assert job.error == "r0.run: run 'r0' is already in collection 'track' (use --replace to replace it)"
    job = _import(collection, _write(tmp_path / "runs"), settings, 2, replace=True)
    assert (job.status, job.parts.count(), collection.runs.count()) == (Job.Status.DONE, 2, 8)
    assert _gone(var_dir, job)


def test_parts_are_contiguous_slices_of_about_the_same_size():
    from workbench.jobs.subjobs import balanced

    assert balanced([1] * 10, 3) == [(0, 3), (3, 7), (7, 10)]
    assert balanced([10, 1, 1, 1, 1, 1, 1, 1, 1, 1], 2) == [(0, 1), (1, 10)]
    assert balanced([5, 1, 1, 5], 2) == [(0, 2), (2, 4)]
    assert balanced([5, 5], 3) == [(0, 1), (1, 2)]  # never an empty part
    assert balanced([0, 0, 0, 0], 2) == [(0, 1), (1, 4)]


@pytest.mark.django_db
def test_archives_and_few_files_are_imported_by_one_worker(tmp_path, settings, var_dir):
    import zipfile

    paths = _write(tmp_path / "runs")
    with zipfile.ZipFile(tmp_path / "more.zip", "w") as archive:
        archive.writestr("z.run", factories.run_lines("z", {"1": ["zd1"]}))
    job = _import(_track("archives"), [*paths, tmp_path / "more.zip"], settings, 2)
    assert (job.status, job.error, job.parts.count()) == (Job.Status.DONE, "", 0)
    assert Run.objects.filter(collection=job.collection).count() == 9
    job = _import(_track("few"), paths[:5], settings, 3)  # fewer than two files a part
    assert (job.status, job.parts.count()) == (Job.Status.DONE, 0)


@pytest.mark.django_db
def test_a_part_that_fails_fails_the_job_and_the_staged_upload_is_removed(tmp_path, settings, var_dir, monkeypatch):
    real = workbench_tasks.runs_check

    def failing(collection, specs, **kwargs):
        specs = list(specs)
        if any(spec.name == "r7.run" for spec in specs):
            raise RuntimeError("the disk went away")
        return real(collection, specs, **kwargs)

    monkeypatch.setattr(workbench_tasks, "runs_check", failing)
    job = _import(_track("split"), _write(tmp_path / "runs"), settings, 2)
    assert (job.status, job.error) == (Job.Status.FAILED, "part 2 of 2: the disk went away")
    assert not Run.objects.exists()
    assert _gone(var_dir, job)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("killed", ["while running it", "right after claiming it"])
def test_a_part_whose_worker_died_is_done_by_another_worker_once_with_the_same_runs(tmp_path, settings, var_dir,
                                                                                    killed):
    paths = _write(tmp_path / "runs")
    whole = _import(_track("one"), paths, settings, 1)
    settings.TASKS = DB_TASKS
    job = _import(_track("split"), paths, settings, 2)
    run_worker("--max-tasks", "1")  # plans: 2 parts queued
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == (Job.Status.RUNNING, 0, 2)
    dead = job.parts.order_by("pk")[1]
    kill_worker_of(dead, began=killed == "while running it")
    run_worker()
    job.refresh_from_db()
    assert (job.status, job.error, job.result) == (Job.Status.DONE, "", whole.result)
    assert _stored(job.collection) == _stored(whole.collection)
    dead.refresh_from_db()
    assert dead.status == Job.Status.DONE and dead.params["retried"]
    assert_each_part_done_once("workbench.tasks.import_runs_part", "workbench.tasks.join_runs_import", 2)
    assert _gone(var_dir, job)


@pytest.mark.django_db
def test_in_a_bucket_each_part_fetches_only_its_own_files(tmp_path, settings, s3, monkeypatch):
    import uuid

    prefix = f"t-{uuid.uuid4().hex[:8]}"
    settings.STORAGES = s3.storages(prefix)
    settings.VAR_DIR, settings.WORK_DIR = tmp_path / "web", tmp_path / "worker"
    paths = _write(tmp_path / "runs")
    (tmp_path / "manifest.csv").write_text(MANIFEST)
    whole = _import(_track("one"), paths, settings, 1, manifest=tmp_path / "manifest.csv")
    opened = []
    real = store.open_file
    monkeypatch.setattr(store, "open_file", lambda name: (opened.append(name.rsplit("/", 1)[1]), real(name))[1])
    job = _import(_track("split"), paths, settings, 2, manifest=tmp_path / "manifest.csv")
    assert (job.status, job.error, job.result) == (Job.Status.DONE, "", whole.result)
    assert _stored(job.collection) == _stored(whole.collection)
    fetched = sorted(n for n in opened if n.endswith((".run", ".csv")))
    assert fetched == sorted([p.name for p in paths] + ["manifest.csv"])  # each file once, by the part that reads it
    assert s3.keys(f"{prefix}/uploads/") == [] and s3.keys(f"{prefix}/jobs/") == []
    assert not [p for p in (tmp_path / "worker").rglob("*") if p.is_file()]


@pytest.mark.django_db(transaction=True)
def test_runs_a_part_stored_are_seen_by_nobody_until_the_join_moves_them(tmp_path, settings, var_dir, client,
                                                                          organizer):
    collection = _track("staged")
    settings.TASKS = DB_TASKS
    job = _import(collection, _write(tmp_path / "runs"), settings, 2)
    run_worker("--max-tasks", "2")  # planned, one part done
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == (Job.Status.RUNNING, 1, 2)
    staging = Collection.all_objects.get(staging=True)
    assert staging.slug == f"_import-{job.pk}-0" and Run.objects.filter(collection=staging).count() == 4
    assert not Collection.objects.filter(slug=staging.slug).exists() and collection.runs.count() == 0
    client.force_login(organizer)
    assert staging.slug not in client.get("/console/").content.decode()
    assert client.get(f"/console/{collection.slug}/").status_code == 200
    assert client.get(f"/console/{staging.slug}/").status_code == 404
    run_worker()  # the other part, then the join
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.DONE, "")
    assert sorted(collection.runs.values_list("tag", flat=True)) == [f"r{i}" for i in range(8)]
    assert _gone(var_dir, job)


@pytest.mark.django_db
def test_a_part_done_again_stores_its_runs_once(tmp_path, settings, var_dir):
    from workbench.collections.run_imports import RunSpec, runs_check, runs_stage

    collection = _track("again")
    checked, _ = runs_check(collection, [RunSpec(source=p) for p in _write(tmp_path / "runs", count=3)])
    for _ in range(2):  # its worker died after storing: the next one stores them again
        runs_stage("_import-1-0", checked)
    assert Collection.all_objects.filter(staging=True).count() == 1
    assert Run.objects.filter(collection__slug="_import-1-0").count() == 3
