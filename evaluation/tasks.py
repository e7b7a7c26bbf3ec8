"""Evaluation's background jobs (run by ``manage.py db_worker``; see ``workbench.jobs.lifecycle``)."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django_tasks import task

from evaluation import board, board_extras, board_files, board_store, cache, release
from evaluation.board_topics import board_part as compute_board_part
from evaluation.board_topics import board_sections, build_joined, joined_figures
from evaluation.planner import budget_plan, judging_cost
from evaluation.report import evaluation_report, report_joined, report_section, report_sections
from evaluation.reusability import stored_leave_one_out
from evaluation.scoring import EvaluationError, normalise_policy
from judging.machine_agreement import agreement_job_start, agreement_stored
from judging.models import MachineJudge
from judging.policies import DEFAULT_POLICY
from judging.tasks import machine_agreement_job
from workbench.access.audit import audit_record
from workbench.jobs import lifecycle as jobs
from workbench.jobs import subjobs
from workbench.jobs.kinds import JobKind
from workbench.models import Collection, Job


@task()
def build_release(job_id: int) -> None:
    """The release bundle of the job's collection, as a zip kept with the job for download."""
    with jobs.running(job_id) as progress:
        job: Job = progress.job
        progress.step("reading the topics, the qrels, the pool and the runs")
        bundle = release.release_bundle(job.collection, policy=job.params.get("policy", "adjudicated"))
        progress.step("writing the zip")
        jobs.write_output(job, bundle.filename, bundle.data)
        audit_record(collection=job.collection, actor=job.started_by, action="release bundle built",
                     detail=f"{bundle.filename} (qrels policy {job.params.get('policy', 'adjudicated')})")
        progress.finish(file=bundle.filename, files=len(bundle.files),
                        url=reverse("evaluation:download_release_file", args=[job.collection.slug, job.pk]),
                        label=f"Download {bundle.filename}")


@task()
def evaluate_collection(job_id: int) -> None:
    """Every run scored (per topic too) and leave-one-out by run and by team, as a zip kept with the job. With
    ``JOB_PARTS`` > 1 the work is split into parts that any worker claims (``JOB_PARTS`` slices of the topics:
    each part ranks and scores every run on its topics), joined by :func:`join_evaluation`."""
    shares = int(getattr(settings, "JOB_PARTS", 1) or 1)
    job = Job.objects.get(pk=job_id)
    if shares > 1 and not _stored_here(job.collection, job.params.get("policy", "adjudicated")):
        sections = report_sections(job.collection, shares=shares)
        if len(sections) > 1:  # else (no judged topic, or one): one worker (which says why, if it cannot)
            subjobs.split(job_id, task=evaluation_part, join=join_evaluation, parts=sections)
            return
    with jobs.running(job_id) as progress:
        job: Job = progress.job
        bundle = evaluation_report(job.collection, measures=job.params.get("measures") or None,
                                   policy=job.params.get("policy", "adjudicated"), step=progress.step)
        _keep_report(progress, bundle)


def _stored_here(collection, policy: str) -> bool:
    """:func:`_stored`, asked only where boards are on this machine's disk: with files in a bucket the planner
    splits without waiting on the bucket (a planner that hangs on storage before its job is running is taken
    for a dead worker)."""
    return not board_store.shared() and _stored(collection, policy)


def _stored(collection, policy: str) -> bool:
    """Whether the version's board job stored what the report holds (the scores, leave-one-out by run and by
    team): one worker then reads it in seconds, where parts would compute it all again."""
    try:
        policy = normalise_policy(policy)
    except EvaluationError:
        return False
    if not board.any_stored(collection, policy):  # no board of any version: the version (counts of the pool's
        return False                              # entries, 0.5 s at 1,000 runs) is not read for nothing
    return board.current(collection, policy) is not None and all(
        stored_leave_one_out(collection, measure="map", by=by, qrels_policy=policy) is not None for by in ("run", "team"))


def _keep_report(progress: jobs.Progress, bundle) -> None:
    job = progress.job
    progress.step("writing the zip")
    jobs.write_output(job, bundle.filename, bundle.data)
    progress.finish(file=bundle.filename,
                    url=reverse("evaluation:download_release_file", args=[job.collection.slug, job.pk]),
                    label=f"Download {bundle.filename}")


@task(takes_context=True)
def evaluation_part(context, job_id: int) -> None:
    """One part of a split evaluation (:func:`evaluate_collection`)."""
    with subjobs.part(job_id, context) as progress:
        if progress is None:
            return
        job, parent = progress.job, progress.job.parent
        progress.step(f"part {job.params['part'] + 1} of {parent.total}: every run scored and left out on "
                      f"{len(job.params['topics'])} topics")
        subjobs.keep(progress, report_section(job.collection, job.params, measures=parent.params.get("measures") or None,
                                              policy=parent.params.get("policy", "adjudicated")))


@task(takes_context=True)
def join_evaluation(context, job_id: int) -> None:
    """The report of a split evaluation from its parts' outputs: the zip one worker would have written."""
    job = Job.objects.get(pk=job_id)
    if job.finished or subjobs.superseded(job, context):
        return
    with jobs.running(job_id) as progress:
        job = progress.job
        progress.step("joining the parts: the leaderboard and the leave-one-out")
        bundle = report_joined(job.collection, subjobs.outputs(job), measures=job.params.get("measures") or None,
                               policy=job.params.get("policy", "adjudicated"))
        _keep_report(progress, bundle)




@task()
def plan_budget(job_id: int) -> None:
    """The budget plan of the job's collection (``evaluation.planner``), kept in the job's result for its page."""
    with jobs.running(job_id) as progress:
        job: Job = progress.job
        progress.step("ranking the runs at subsampled pool depths and topics")
        plan = budget_plan(job.collection, planned=job.params.get("planned"))
        cost = judging_cost(job.collection, plan.more, per_hour=job.params.get("per_hour"),
                            cost_per_hour=job.params.get("cost_per_hour"))
        line = (f"{plan.judgments:,} judgments so far: {plan.judgments_to_tau:,} needed for τ ≥ {plan.target} "
                f"({plan.more:,} more)" if plan.judgments_to_tau is not None else
                f"{plan.judgments:,} judgments so far: not enough to plan")
        progress.finish(lines=[line], plan=plan.as_json(), cost=cost,
                        url=reverse("evaluation:budget", args=[job.collection.slug]), label="See the plan")


@task()
def build_board(job_id: int) -> None:
    """The board of the job's collection at its current version, for each policy the job names
    (:func:`evaluation.board.build`); a policy that cannot be evaluated yet is reported, not failed. With
    ``JOB_PARTS`` > 1, each policy whose board is not stored is split by topic into parts any worker claims
    (:mod:`evaluation.board_topics`), joined by :func:`join_board`."""
    shares = int(getattr(settings, "JOB_PARTS", 1) or 1)
    job = Job.objects.get(pk=job_id)
    if job.parts.exists():  # a planner retried after it split the job: its parts go on
        return
    if shares > 1:
        sections = board_sections(job.collection, _policies(job), shares=shares)
        if sections:
            subjobs.split(job_id, task=board_part, join=join_board, parts=sections)
            return
    with jobs.running(job_id) as progress:
        _boards(progress, {})


def _policies(job: Job) -> list[str]:
    return job.params.get("policies") or ["adjudicated"]


def _boards(progress: jobs.Progress, joined: dict, extras: dict | None = None) -> None:
    """Each policy's board: from its parts' outputs when ``joined`` has them (with the figures, under
    ``None``, and the extras' parts' outputs in ``extras``), else as one worker builds it."""
    job: Job = progress.job
    policies = _policies(job)
    written, skipped = [], {}
    version = board.version_key(cache.version(job.collection))
    counted = not joined  # a split job's done and total count its parts
    for i, policy in enumerate(policies):
        progress.step(f"board {i + 1} of {len(policies)} ({policy})",
                      **({"done": i, "total": len(policies)} if counted else {}))
        try:
            if policy in joined:
                path = build_joined(job.collection, policy, joined[policy], joined[None],
                                    extras=(extras or {}).get(policy), step=progress.step)
            else:
                path = board.build(job.collection, policy, step=progress.step)
            written.append(path.name)
        except EvaluationError as exc:
            skipped[policy] = str(exc)
    if not board_store.stored(board_extras.extra_name(job.collection.pk, version, DEFAULT_POLICY, board_extras.POOLS)):
        progress.step("every pool's statistics")  # no board stored them (none could be evaluated yet)
        board_extras.store_pools(job.collection, version)
    _machine_agreements(job.collection)
    progress.step("done", **({"done": len(policies), "total": len(policies)} if counted else {}))
    progress.finish(boards=written, skipped=skipped, version=version)


def _machine_agreements(collection: Collection) -> None:
    """A job per machine judge whose agreement with the humans at this state is not stored nor being computed
    (:mod:`judging.machine_agreement`): its page then reads it rather than ranking every run twice."""
    for judge in MachineJudge.objects.filter(collection=collection).select_related("collection"):
        figures, pending = agreement_stored(judge)
        if figures is None and pending is None:
            agreement_job_start(judge, task=machine_agreement_job)


@task(takes_context=True)
def board_part(context, job_id: int) -> None:
    """One part of a split board job (:func:`build_board`)."""
    with subjobs.part(job_id, context) as progress:
        if progress is None:
            return
        job, parent = progress.job, progress.job.parent
        what = (f"every run scored and left out on {len(job.params['topics'])} topics ({job.params['policy']})"
                + (f"; how much of {len(job.params['figure_topics'])} topics is judged"
                   if "figure_topics" in job.params else "")
                if "topics" in job.params else f"the {', '.join(job.params['extras'])} ({job.params['policy']})"
                if "extras" in job.params else "the assessors, and infAP where the pool was sampled")
        progress.step(f"part {job.params['part'] + 1} of {parent.total}: {what}")
        subjobs.keep(progress, compute_board_part(job.collection, job.params))


@task(takes_context=True)
def join_board(context, job_id: int) -> None:
    """The boards of a split board job from its parts' outputs: what one worker stores."""
    job = Job.objects.get(pk=job_id)
    if job.finished or subjobs.superseded(job, context):
        return
    with jobs.running(job_id) as progress:
        job = progress.job
        progress.step("joining the parts")
        joined: dict = {}
        params = [p["params"] for p in job.parts.values("params")]
        extras: dict[str, list] = {}
        for found, data in zip(sorted(params, key=lambda p: p["part"]), subjobs.outputs(job), strict=True):
            key = found.get("policy")  # None: the figures' part
            if "extras" in found:
                extras.setdefault(key, []).append(data)
            else:
                joined[key] = data if key is None else [*joined.get(key, []), data]
        joined[None] = joined_figures(joined[None], [d for key, found in joined.items() if key for d in found])
        _boards(progress, joined, extras)




def request_board(collection: Collection, policies: list[str] | None = None) -> Job:
    """Queue a board job for the collection (the version current when it runs), unless one is queued already
    (a burst of changes gives one job); ``policies`` (default: the default policy) are added to a queued job's.
    Asked by what changed the collection, once its write is committed (:mod:`evaluation.apps`), never by a
    page."""
    wanted = list(policies or [DEFAULT_POLICY])
    job = Job.objects.filter(collection=collection, kind=board_files.KIND, status=Job.Status.QUEUED
                             ).order_by("-id").first()
    if job is not None:
        missing = [p for p in wanted if p not in job.params.get("policies", [])]
        if not missing:
            return job
        job.params = {**job.params, "policies": [*job.params.get("policies", []), *missing]}
        job.save(update_fields=["params"])
        return job
    return jobs.job_start(_board_task(collection), kind=board_files.KIND, collection=collection,
                          params={"policies": wanted})


#: a collection's board job starts this long after its last one ended at the earliest: assessors judging without
#: pause would otherwise keep the worker rebuilding boards back to back, on the web workers' cores
#: (docs/benchmarks.md)
BOARD_PAUSE_SECONDS = 10


def _board_task(collection: Collection):
    """:func:`build_board`, deferred (where the task backend can defer: the worker's can) until
    ``BOARD_PAUSE_SECONDS`` after the collection's last board job ended, or, while it runs, after it should end
    (its start and the duration of the one before)."""
    pause = timedelta(seconds=getattr(settings, "BOARD_PAUSE_SECONDS", BOARD_PAUSE_SECONDS))
    if not pause or not build_board.get_backend().supports_defer:
        return build_board
    last = list(Job.objects.filter(collection=collection, kind=board_files.KIND, parent=None,
                                   started_at__isnull=False)
                .order_by("-started_at").values_list("started_at", "finished_at")[:2])
    if not last:
        return build_board
    started, ended = last[0]
    if ended is None:  # running: it should take as long as the one before
        ended = started + (last[1][1] - last[1][0] if len(last) > 1 and last[1][1] else timedelta(0))
    if ended + pause <= timezone.now():
        return build_board
    return build_board.using(run_after=ended + pause)


@task()
def build_leave_one_out(job_id: int) -> None:
    """Leave-one-out of one measure (by run or by team) at the collection's current version, stored for the
    reusability page (:func:`evaluation.board_extras.store_leave_one_out`)."""
    with jobs.running(job_id) as progress:
        job: Job = progress.job
        params = job.params
        progress.step(f"leaving each contributing {params['by']} out and scoring it again ({params['measure']})")
        board_extras.store_leave_one_out(job.collection, params["policy"], params["measure"], params["by"])
        progress.finish(url=reverse("evaluation:reusability", args=[job.collection.slug])
                        + "?" + urlencode({"measure": params["measure"], "by": params["by"]}),
                        label="See leave-one-out")


#: this app's jobs (registered by workbench.jobs.kinds.autodiscover): a planner that died is planned again (its
#: parts, if any, kept); a part writes only its own output and the join the job's output whole
JOB_KINDS = (
    JobKind("evaluation", "Evaluation", evaluate_collection, retry=True, part=evaluation_part, join=join_evaluation,
            params=("policy", "measures"), help="Scores every run (per topic too) and leaves each run and team out.",
            back=("evaluation:downloads", "the collection's downloads")),
    JobKind(board_files.KIND, "Board", build_board, retry=True, part=board_part, join=join_board,
            params=("policies",), help="Computes and stores the collection's boards, the figures the pages read."),
    JobKind("release bundle", "Release bundle", build_release, params=("policy",),
            help="Writes the release zip: qrels, topics, scores and the collection's description.",
            back=("evaluation:downloads", "the collection's downloads")),
    JobKind("budget plan", "Budget plan", plan_budget, help="Plans a judging budget from what was judged so far."),
    JobKind(board_extras.LOO_KIND, "Leave-one-out", build_leave_one_out, params=("policy", "measure", "by"),
            help="Leave-one-out of one measure, by run or by team, for the reusability page."),
)
