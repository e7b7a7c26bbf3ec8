"""Pages of a collection's results: overview, downloads (qrels, pool, release bundle)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_tables2 import RequestConfig

from evaluation import release
from evaluation.access import results_view
from evaluation.tables import RunTable, TopicTable
from judging.selectors import QRELS_POLICIES, assessor_judgments
from pooling import selectors as pooling_selectors
from pooling import strategies
from workbench.models import Collection
from workbench.selectors import is_organizer


def _topic_rows(collection: Collection) -> list[dict]:
    from judging.selectors import qrels

    titles = dict(collection.topics.values_list("qid", "title"))
    pool = pooling_selectors.pool_named(collection)
    judged = qrels(collection)
    sizes: dict[str, int] = {}
    if pool is not None:
        pairs = pooling_selectors.pool_pairs(pool)
        sizes = pairs.groupby("qid").size().to_dict() if len(pairs) else {}
    counts = judged.groupby("qid").size().to_dict() if len(judged) else {}
    relevant = (judged[judged["rel"] >= collection.relevant_from].groupby("qid").size().to_dict()
                if len(judged) else {})
    return [{"qid": q, "title": titles[q], "pool_size": sizes.get(q, 0), "judged": counts.get(q, 0),
             "relevant": relevant.get(q, 0)} for q in strategies.sorted_topics(titles)]


@results_view()
def overview(request: HttpRequest, collection: Collection) -> HttpResponse:
    runs = RunTable(collection.runs.all(), prefix="r-")
    RequestConfig(request, paginate={"per_page": 50}).configure(runs)
    topic_rows = _topic_rows(collection)
    topics = TopicTable(topic_rows, prefix="t-")
    RequestConfig(request, paginate={"per_page": 50}).configure(topics)
    pool = pooling_selectors.pool_named(collection)
    pooled = sum(r["pool_size"] for r in topic_rows)
    judged_pooled = sum(min(r["judged"], r["pool_size"]) for r in topic_rows)
    context = {
        "collection": collection, "runs": runs, "topics": topics, "pool": pool,
        "n_topics": len(topic_rows), "n_runs": collection.runs.count(),
        "n_contributing": collection.runs.filter(contributes=True).count(),
        "pooled": pooled, "judged": sum(r["judged"] for r in topic_rows),
        "relevant": sum(r["relevant"] for r in topic_rows),
        "judged_percent": round(100 * judged_pooled / pooled) if pooled else 0,
        "organizer": is_organizer(request.user),
    }
    return render(request, "evaluation/overview.html", context)


@results_view()
def downloads(request: HttpRequest, collection: Collection) -> HttpResponse:
    judgments = assessor_judgments(collection)
    assessors = sorted(judgments["assessor"].unique()) if len(judgments) else []
    return render(request, "evaluation/downloads.html", {"collection": collection, "assessors": assessors,
                                                         "policies": QRELS_POLICIES})


def _attachment(content: str | bytes, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@results_view()
def download_qrels(request: HttpRequest, collection: Collection) -> HttpResponse:
    policy = request.GET.get("policy", "adjudicated")
    if policy not in QRELS_POLICIES:
        return HttpResponse(f"unknown policy {policy!r}", status=400, content_type="text/plain")
    assessor = request.GET.get("assessor") or None
    binary = request.GET.get("binary") == "1"
    text = release.qrels_text(collection, policy=policy, assessor=assessor, binary=binary)
    suffix = f".{assessor}" if assessor else f".{policy}"
    return _attachment(text, f"qrels.{collection.slug}{suffix}{'.binary' if binary else ''}.txt",
                       "text/plain; charset=utf-8")


@results_view()
def download_pool(request: HttpRequest, collection: Collection) -> HttpResponse:
    return _attachment(release.pool_text(collection), f"pool.{collection.slug}.txt", "text/plain; charset=utf-8")


@results_view()
def download_release(request: HttpRequest, collection: Collection) -> HttpResponse:
    bundle = release.release_bundle(collection, policy=request.GET.get("policy", "adjudicated"))
    return _attachment(bundle.data, bundle.filename, "application/zip")
