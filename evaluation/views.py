"""Pages of a collection's results: overview, pool, leaderboard, run and topic reports, significance,
PR curves, reusability, and downloads (qrels, pool, release bundle)."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.utils.safestring import mark_safe
from django_tables2 import RequestConfig
from django_tables2.export import TableExport

from evaluation import (
    board_files,
    board_pages,
    cache,
    measure_choices,
    plots,
    pool_estimates,
    release,
    scores,
    scoring,
    selectors,
    tables,
)
from evaluation.access import results_view
from evaluation.curves import run_curves, top_runs
from evaluation.engine.significance import CORRECTION_CHOICES, TEST_CHOICES
from evaluation.measures import DEFAULT_MEASURES
from evaluation.scoring import EvaluationError, parse_requests
from evaluation.tables import RunTable, TopicTable, leaderboard_table, overlap_table
from evaluation.tasks import build_release, evaluate_collection
from judging.exchange import judgments_jsonl
from judging.policies import DEFAULT_POLICY, uses_machine
from judging.qrels import POLICIES
from pooling import selectors as pooling_selectors
from pooling import strategies
from workbench.collections import files as store
from workbench.collections.selectors import may_organize
from workbench.formats.spreadsheet import frame_csv, safe_values
from workbench.formats.vocabulary import UnknownChoice
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection, Job


@results_view()
def overview(request: HttpRequest, collection: Collection) -> HttpResponse:
    contributed = pooling_selectors.contributed_runs(collection)
    runs = RunTable([{**row, "contributed": contributed.get(row["tag"], False)} for row in collection.runs.values(
        "tag", "team", "contributes", "pool_priority", "num_topics", "num_entries", "imported_at")], prefix="r-")
    RequestConfig(request, paginate={"per_page": 50}).configure(runs)
    topic_rows = [{**row, "url": reverse("evaluation:topic", args=[collection.slug, row["qid"]])}
                  for row in selectors.topic_overview(collection)]
    topics = TopicTable(topic_rows, prefix="t-", extra_columns=tables.JUDGED_COLUMNS,
                        sequence=("qid", "title", "pool_size", "judged", "judgments", "relevant"))
    RequestConfig(request, paginate={"per_page": 50}).configure(topics)
    judged = selectors.judged_figures(collection)
    pool = pooling_selectors.pool_named(collection, judged.pool) if judged.pool else None
    context = {
        "collection": collection, "runs": runs, "topics": topics, "pool": pool, "judged": judged,
        "n_topics": len(topic_rows), "n_runs": collection.runs.count(),
        "n_contributing": sum(contributed.values()),
        "relevant": sum(r["relevant"] for r in topic_rows),
        "organizer": may_organize(request.user, collection),
    }
    return render(request, "evaluation/overview.html", context)


@results_view()
def downloads(request: HttpRequest, collection: Collection) -> HttpResponse:
    return render(request, "evaluation/downloads.html", {"collection": collection,
                                                         "assessors": selectors.assessor_names(collection),
                                                         "policies": selectors.offered_policies(collection)})


def _attachment(content: str | bytes, filename: str, content_type: str) -> HttpResponse:
    """A download named ``filename``: a name taken from the query string (an assessor's) may hold anything, so
    control characters become ``_`` (a header cannot hold a newline) and Django quotes the rest."""
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, re.sub(r"[\x00-\x1f\x7f]", "_", filename))
    return response


@results_view()
def download_qrels(request: HttpRequest, collection: Collection) -> HttpResponse:
    try:
        policy = POLICIES.parse(request.GET.get("policy"), default=POLICIES.default)
    except UnknownChoice as exc:
        return _error_page(request, collection, str(exc))
    assessor = request.GET.get("assessor") or None
    binary = request.GET.get("binary") == "1"
    duplicates = request.GET.get("duplicates") == "1" and not assessor  # NIST's "with duplicates" qrels
    text = release.qrels_text(collection, policy=policy, assessor=assessor, binary=binary, duplicates=duplicates)
    suffix = f".{assessor}" if assessor else f".{policy}" + (".with-duplicates" if duplicates else "")
    return _attachment(text, f"qrels.{collection.slug}{suffix}{'.binary' if binary else ''}.txt",
                       "text/plain; charset=utf-8")


@results_view()
def download_pool(request: HttpRequest, collection: Collection) -> HttpResponse:
    name = request.GET.get("name")  # one pool; without a name, every pool's pairs (as the release bundle)
    if name and pooling_selectors.pool_named(collection, name) is None:
        raise Http404("No such pool.")
    text = release.pool_text(collection, name) if name else release.pools_text(collection)
    return _attachment(text, f"pool.{collection.slug}{'.' + name if name else ''}.txt", "text/plain; charset=utf-8")


@results_view()
def download_judgments(request: HttpRequest, collection: Collection) -> HttpResponse:
    """Every judgment record (comments, passages, "cannot judge", revisions) as JSON lines."""
    return _attachment(judgments_jsonl(collection), f"judgments.{collection.slug}.jsonl",
                       "application/x-ndjson; charset=utf-8")


@results_view()
def download_release(request: HttpRequest, collection: Collection) -> HttpResponse:
    """POST: build the release bundle in the background (a job), then follow it on the job's page; the bundle
    is never built inside a request."""
    if request.method != "POST":
        return redirect("evaluation:downloads", slug=collection.slug)
    try:
        policy = POLICIES.parse(request.POST.get("policy"), default=POLICIES.default)
    except UnknownChoice as exc:
        return _error_page(request, collection, str(exc))
    job = jobs.job_start(build_release, kind="release bundle", user=request.user, collection=collection,
                         params={"policy": policy})
    return redirect("job", job_id=job.pk)


@results_view()
def evaluate_job(request: HttpRequest, collection: Collection) -> HttpResponse:
    """POST: score every run (per topic too) and leave each run and team out, as a background job whose
    zip is downloaded from its page."""
    if request.method != "POST":
        return redirect("evaluation:downloads", slug=collection.slug)
    measures = request.POST.get("measures", "").replace(",", " ").split()
    try:
        policy = POLICIES.parse(request.POST.get("policy"), default=POLICIES.default)
        parse_requests(measures or list(DEFAULT_MEASURES))
    except (EvaluationError, ValueError) as exc:
        return _error_page(request, collection, str(exc))
    job = jobs.job_start(evaluate_collection, kind="evaluation", user=request.user, collection=collection,
                         params={"policy": policy, "measures": measures})
    return redirect("job", job_id=job.pk)


#: the kinds of job whose zip the results pages offer for download
JOB_FILES = ("release bundle", "evaluation")


@results_view()
def download_release_file(request: HttpRequest, collection: Collection, job_id: int) -> HttpResponse:
    """The zip a release or evaluation job built (anyone who may see the collection's results may download it)."""
    job = Job.objects.filter(pk=job_id, collection=collection, kind__in=JOB_FILES,
                             status=Job.Status.DONE).first()
    name = jobs.job_output(job, job.result.get("file", "")) if job is not None else ""
    if not name or not store.exists(name):
        raise Http404("No such release bundle.")
    return FileResponse(store.open_file(name), as_attachment=True, filename=PurePosixPath(name).name,
                        content_type="application/zip")


# --- leaderboard and reports ----------------------------------------------------------------------

def _choices(request: HttpRequest, collection: Collection) -> dict:
    """Measures, qrels policy, topics and test chosen in the query string. Topics: ``complete`` (only the
    fully judged ones) by default when some topics are partly judged, else ``all``."""
    measures = measure_choices.requested(request.GET) or None
    policy = request.GET.get("qrels") or POLICIES.default
    assessor = None
    if policy.startswith("assessor:"):
        assessor, policy = policy.split(":", 1)[1], POLICIES.default
    policy = POLICIES.parse(policy)
    test = TEST_CHOICES.parse(request.GET.get("test"), default=TEST_CHOICES.default)
    correction = CORRECTION_CHOICES.parse(request.GET.get("correction"), default=CORRECTION_CHOICES.default)
    done = scores.completeness(collection)
    topics = tables.TOPIC_SCOPES.parse(request.GET.get("topics"),
                                default="complete" if done.has_partial and done.complete else "all")
    scoped = policy + scoring.COMPLETE if topics == "complete" else policy
    return {"measures": measures, "measures_text": " ".join(measures or []), "qrels_policy": scoped,
            "measure_rows": measure_choices.rows(measures or DEFAULT_MEASURES),
            "measure_groups": measure_choices.groups(measures or DEFAULT_MEASURES),
            "measure_syntax": measure_choices.syntax(),
            "policy": policy, "topics": topics, "completeness": done,
            "assessor": assessor, "test": test, "correction": correction,
            "test_label": TEST_CHOICES.label(test), "correction_label": CORRECTION_CHOICES.label(correction),
            "tests": TEST_CHOICES, "corrections": CORRECTION_CHOICES, "policies": selectors.offered_policies(collection),
            "scopes": tables.TOPIC_SCOPES}


def _error_page(request, collection, message: str) -> HttpResponse:
    return render(request, "evaluation/error.html", {"collection": collection, "message": message}, status=400)


@results_view()
def leaderboard(request: HttpRequest, collection: Collection) -> HttpResponse:
    try:
        choice = _choices(request, collection)
        options = {"measures": choice["measures"], "qrels_policy": choice["qrels_policy"],
                   "assessor": choice["assessor"], "test": choice["test"], "correction": choice["correction"]}
        board, state = selectors.stored_leaderboard(collection, **options)
        if state.status == "computing":
            return board_pages.computing(request, collection, state.job)
        board = board or selectors.leaderboard(collection, **options)
    except (EvaluationError, ValueError) as exc:
        return _error_page(request, collection, str(exc))
    if request.GET.get("_export") == "json":
        return JsonResponse(board.as_dict())
    table = leaderboard_table(board,
                              run_url=lambda tag: reverse("evaluation:run", args=[collection.slug, tag]))
    RequestConfig(request, paginate={"per_page": 100}).configure(table)
    if request.GET.get("_export") == "csv":
        return TableExport("csv", safe_values(table)).response(f"leaderboard.{collection.slug}.csv")
    table_html = board_pages.table_html(request, board, table)
    flagged = [r for r in board.runs if r.flags]
    judged = selectors.judged_figures(collection)
    partial = [(qid, judged.topics[qid]["judged_in_pool"], judged.topics[qid]["pooled"])
               if judged.topics.get(qid, {}).get("pooled") else (qid, *counts)
               for qid, counts in choice["completeness"].partial.items()]
    machine_share = (sorted(selectors.machine_only_share(collection).items(), key=lambda kv: (-kv[1], kv[0]))
                     if uses_machine(choice["policy"]) and not choice["assessor"] else None)
    return render(request, "evaluation/leaderboard.html", {
        "collection": collection, "board": board, "table": table, "flagged": flagged, "choice": choice,
        "machine_share": machine_share, "policy_label": POLICIES.label(choice["policy"]),
        "organizer": may_organize(request.user, collection), "query": request.GET.urlencode(), "judged": judged,
        "partial": partial, "assessors": selectors.assessor_names(collection),
        "completeness": choice["completeness"], "board_state": state, "table_html": table_html})


@results_view()
def run_page(request: HttpRequest, collection: Collection, tag: str) -> HttpResponse:
    run = collection.runs.filter(tag=tag).first()
    if run is None:
        raise Http404("No such run.")
    measure = request.GET.get("measure", "map")
    try:
        choice = _choices(request, collection)
        report = selectors.run_report(collection, tag, measure=measure, qrels_policy=choice["qrels_policy"],
                                      assessor=choice["assessor"])
    except (EvaluationError, ValueError) as exc:
        return _error_page(request, collection, str(exc))
    svg = plots.participant_plot(report, tag, measure) if len(report) else ""
    rows = report.to_dict("records")
    table = tables.run_report_table(rows, collection, tag, measure, request)
    exported = tables.table_export(request, [table], f"{collection.slug}.{tag}.{measure}")
    if exported:
        return exported
    summary = {"above_median": int((report["score"] > report["median"]).sum()),
               "best": int((report["score"] >= report["best"]).sum()), "topics": len(report)}
    return render(request, "evaluation/run.html", {"collection": collection, "run": run, "measure": measure,
                                                   "table": table, "svg": svg, "summary": summary,
                                                   "contributed": pooling_selectors.contributed_runs(collection)
                                                   .get(run.tag, False),
                                                   "organizer": may_organize(request.user, collection)})


@results_view()
def topic_page(request: HttpRequest, collection: Collection, qid: str) -> HttpResponse:
    if not collection.topics.filter(qid=qid).exists():
        raise Http404("No such topic.")
    try:
        choice = _choices(request, collection)
        report = selectors.topic_report(collection, qid, measures=choice["measures"],
                                        qrels_policy=choice["qrels_policy"], assessor=choice["assessor"])
    except (EvaluationError, ValueError) as exc:
        return _error_page(request, collection, str(exc))
    by_depth = report["relevant_by_depth"]
    svg = plots.depth_plot(by_depth) if len(by_depth) else ""
    runs = report["runs"]
    measures = [c for c in [*report["measures"], "judged_10"] if c in runs.columns]
    depth_table = tables.depth_table(by_depth.to_dict("records"), request)
    runs_table = tables.topic_runs_table(runs.to_dict("records") if len(runs) else [], collection, measures, request)
    exported = tables.table_export(request, [depth_table, runs_table], f"{collection.slug}.topic-{qid}")
    if exported:
        return exported
    return render(request, "evaluation/topic.html", {
        "collection": collection, "report": report, "svg": svg, "depth_table": depth_table,
        "runs_table": runs_table, "has_depth": len(by_depth) > 0, "organizer": may_organize(request.user, collection)})


def _curve_choice(request: HttpRequest, collection: Collection) -> tuple[list[str], list[str], str, list[str],
                                                                        str | None]:
    """(every run, the chosen runs, kind, every topic, the chosen topic or None) from the query string."""
    all_tags = list(collection.runs.order_by("tag").values_list("tag", flat=True))
    chosen = all_tags if request.GET.get("all") else [t for t in request.GET.getlist("run") if t in all_tags]
    kind = request.GET.get("kind") if request.GET.get("kind") in plots.CURVE_AXES else "interpolated"
    topics = list(collection.topics.values_list("qid", flat=True))
    topic = request.GET.get("topic") if request.GET.get("topic") in topics else None
    return all_tags, chosen, kind, topics, topic


def _curve_download(request: HttpRequest, collection: Collection, data, kind: str, topic, suffix: str):
    download = request.GET.get("download")
    if download not in ("csv", "svg", "png") or data is None or not len(data):
        return None
    name = re.sub(r"[^A-Za-z0-9._-]", "_", f"{collection.slug}.{kind}{'.' + topic if topic else ''}")
    if download == "csv":
        x, y = plots.CURVE_AXES[kind][:2]
        text = frame_csv(data.rename(columns={"tag": "run", "x": x, "y": y}), index=False)
        return _attachment(text, f"{name}.csv", "text/csv; charset=utf-8")
    body = plots.figure_bytes(plots.curve_figure(data, kind, suffix), download)
    return _attachment(body, f"{name}.{download}", "image/svg+xml" if download == "svg" else "image/png")


@results_view()
def curves(request: HttpRequest, collection: Collection) -> HttpResponse:
    """Precision-recall (11-point or not interpolated) and ROC curves of the chosen runs, averaged over topics
    or for one topic; ``?download=csv|svg|png`` gives the points or the picture."""
    all_tags, chosen, kind, topics, topic = _curve_choice(request, collection)
    try:
        choice = _choices(request, collection)
        chosen = chosen or top_runs(collection, qrels_policy=choice["qrels_policy"]) or all_tags[:5]
        data = run_curves(collection, chosen, kind=kind, topic=topic, qrels_policy=choice["qrels_policy"],
                          assessor=choice["assessor"]) if chosen else None
    except (EvaluationError, ValueError) as exc:
        return _error_page(request, collection, str(exc))
    suffix = f", topic {topic}" if topic else ", mean over topics"
    downloaded = _curve_download(request, collection, data, kind, topic, suffix)
    if downloaded is not None:
        return downloaded
    svg = plots.curve_plot(data, kind, suffix) if data is not None and len(data) else ""
    find = request.GET.get("find", "").strip()
    return render(request, "evaluation/curves.html", {
        "collection": collection, "all_tags": all_tags, "chosen": chosen, "svg": svg, "kind": kind, "find": find,
        "shown": sorted((t for t in all_tags if find.lower() in t.lower()), key=lambda t: t not in chosen),  # ticked first
        "kinds": [(k, v[2]) for k, v in plots.CURVE_AXES.items()], "topics": topics, "topic": topic,
        "query": request.GET.urlencode(), "organizer": may_organize(request.user, collection)})


def _pool_statistics(pool) -> tuple[dict | None, Job | None]:
    """(the pool's statistics, the board job computing the current ones): what the version's board job stored;
    while a job computes them, the newest older version's (with the job: "updating"), or none yet (None, job:
    "being computed"); when no job will store them, computed here (once per version)."""
    stats = selectors.stored_pool_statistics(pool)
    if stats is not None:
        return stats, None
    job = board_files.pending_job(pool.collection)
    if job is None or DEFAULT_POLICY not in job.params.get("policies", []):
        return selectors.pool_statistics(pool), None
    return selectors.stored_pool_statistics(pool, latest=True), job


def _pool_tables_html(request: HttpRequest, pool, updating, **found) -> dict:
    """The pool page's tables are the same for every visitor asking the same query of the same figures (a 143-run
    overlap matrix is most of the page's time): rendered once per version, figures (current or an older
    version's) and query string."""
    key = (cache.version(pool.collection), "pool page tables", pool.pk, updating is None, request.GET.urlencode())
    return cache.cached(key, lambda: {name: mark_safe(table.as_html(request))  # noqa: S308 - django-tables2's HTML
                                      for name, table in found.items()})


@results_view()
def pool_page(request: HttpRequest, collection: Collection) -> HttpResponse:
    """The pool: how it was built, size per topic, unique contributions per run, run-to-run overlap."""

    name = request.GET.get("name")
    pool = pooling_selectors.pool_named(collection, name) if name else pooling_selectors.default_pool(collection)
    if pool is None:
        raise Http404("No such pool.")
    stats, updating = _pool_statistics(pool)
    if stats is None:
        return render(request, "evaluation/pool_computing.html", {"collection": collection, "pool": pool,
                                                                  "job": updating})
    runs = pooling_selectors.pool_run_rows(pool, stats)
    overlap = overlap_table(stats.get("overlap", {}),
                            run_url=lambda tag: reverse("evaluation:run", args=[collection.slug, tag]),
                            request=request, prefix="o-")
    runs_table = tables.contributions_table(runs, collection, request)
    judged = selectors.judged_figures(collection, pool.name)
    topic_rows = [{"qid": q, "relevant": 0, **stats["topics"][q],
                   "judged": judged.topics.get(q, {}).get("judged_in_pool", 0),
                   "judgments": judged.topics.get(q, {}).get("judgments", 0)}  # an older version's topics (updating)
                  for q in strategies.sorted_topics(stats.get("topics", {}))]
    topics_table = tables.rows_table(topic_rows, [
        ("qid", "Topic", lambda r: reverse("evaluation:topic", args=[collection.slug, r["qid"]])),
        ("pool_size", "Pooled", "int"), ("judged", tables.JUDGED_IN_POOL, "int"), ("judgments", tables.JUDGMENTS_ALL, "int"),
        ("relevant", "Relevant", "int")], prefix="t-", request=request, per_page=100, label="Pool per topic")
    estimates = (tables.rows_table(pool_estimates.pool_recall_estimates(pool).to_dict("records"),
                                   pool_estimates.PAGE_COLUMNS, prefix="e-", request=request, per_page=100,
                                   label="Recall estimates") if pool_estimates.has_estimates(pool) else None)
    exported = tables.table_export(request, [runs_table, topics_table, overlap, *([estimates] if estimates else [])],
                                   f"{collection.slug}.pool")
    if exported:
        return exported
    return render(request, "evaluation/pool.html", {
        "collection": collection, "pool": pool, "stats": stats, "judged": judged,
        "tables_html": _pool_tables_html(request, pool, updating, runs=runs_table, overlap=overlap, topics=topics_table),
        "query": tables.query_without_export(request), "estimates_table": estimates, "updating": updating,
        **pooling_selectors.pool_page_facts(pool, stats, runs),
        "organizer": may_organize(request.user, collection)})
