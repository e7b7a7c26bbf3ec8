"""xinfAP and infNDCG of every run from the collection's own stratified sample (a pool built with the
``sampled`` strategy), computed as NIST's ``sample_eval.pl`` computes them (:mod:`evaluation.engine.xinfap`).

The population is what the pool sampled from: every document some pool run ranks within the deepest
stratum's last rank ``D``, in the stratum that holds its best rank. A document is *sampled* when it is one
of the pool's entries and has a current judgment (a stratum whose sample is partly judged so far counts
its judged documents as the sample, as the Horvitz-Thompson estimate of R does); every other population
document is "in the population, not sampled" (-1). A grade below the collection's relevant-from counts
as not relevant (0), so that infAP and the leaderboard's binary measures agree on what is relevant; the
others keep their grade as their gain in infNDCG. :func:`sampled_qrels_lines` writes the same sample in
``sample_eval.pl``'s qrels format (``topic 0 docno stratum grade``), for researchers to check it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evaluation import scoring
from evaluation.cache import cached
from evaluation.engine.xinfap import MAX_RESULTS, SampledTopic, inferred
from evaluation.snapshot import snapshot
from judging.policies import DEFAULT_POLICY
from pooling import strategies as S
from pooling.models import PoolEntry
from workbench.formats.ids import sorted_topics
from workbench.models import Collection

__all__ = ["sampled_qrels", "sampled_qrels_lines", "xinfap_scores"]


def _pool_runs(snap, pool) -> list[str]:
    return [t for t in pool.params.get("runs", []) if t in snap.teams] or \
        [t for t, c in snap.contributed.items() if c]


def sampled_qrels(collection: Collection, *, policy: str = DEFAULT_POLICY, assessor: str | None = None
                  ) -> dict[str, SampledTopic] | None:
    """The sampled population of the collection's sampled pool, per topic (None without such a pool)."""
    snap = snapshot(collection)
    pool = snap.sampled_pool
    if pool is None:
        return None
    strata = [tuple(s) for s in (pool.params.get("strata") or S.DEFAULT_STRATA)]
    population = S.ranked_entries(scoring.frames(collection, _pool_runs(snap, pool)), int(strata[-1][1]))
    best = population.groupby(["qid", "docno"], sort=False)["rank"].min()
    sample = set(PoolEntry.objects.filter(pool=pool.pool).values_list("topic__qid", "docno"))
    qrels = scoring.qrels_frame(collection, policy=policy, assessor=assessor)
    grades = dict(zip(zip(qrels["qid"].astype(str), qrels["docno"].astype(str), strict=True),
                      qrels["rel"].astype(int), strict=True))
    firsts = np.array([s[0] for s in strata])
    topics: dict[str, SampledTopic] = {}
    for (qid, docno), rank in best.items():
        h = int(np.searchsorted(firsts, rank, side="right")) - 1
        if h < 0 or rank > strata[h][1]:
            continue
        grade = grades.get((str(qid), str(docno)), -1) if (str(qid), str(docno)) in sample else -1
        grade = 0 if grade >= 0 and not collection.is_relevant(grade) else grade
        topics.setdefault(str(qid), SampledTopic()).add(str(docno), str(h + 1), grade)
    return topics


def sampled_qrels_lines(topics: dict[str, SampledTopic]) -> list[str]:
    """``topic 0 docno stratum grade`` lines, topics in natural order, documents sorted."""
    return [f"{qid} 0 {docno} {topics[qid].stratum[docno]} {topics[qid].grade[docno]}"
            for qid in sorted_topics(topics) for docno in sorted(topics[qid].grade)]


def xinfap_scores(collection: Collection, *, policy: str = DEFAULT_POLICY, assessor: str | None = None
                  ) -> dict[str, dict[str, float]] | None:
    """``{tag: {"xinfAP": mean, "infNDCG": mean}}`` over the topics of the sample each run ranks (None
    without a sampled pool)."""
    snap = snapshot(collection)
    if snap.sampled_pool is None:
        return None
    policy = scoring.normalise_policy(policy)

    def compute() -> dict[str, dict[str, float]]:
        topics = sampled_qrels(collection, policy=policy, assessor=assessor)
        runs = scoring.frames(collection)
        ranked = S.ranked_entries(runs, MAX_RESULTS)
        keys = pd.MultiIndex.from_arrays([ranked["qid"].astype(str), ranked["docno"].astype(str)])
        wanted = pd.MultiIndex.from_tuples([(q, d) for q, t in topics.items() for d in t.grade],
                                           names=["qid", "docno"])
        ranked = ranked[keys.isin(wanted)]
        out = {}
        for tag in snap.tags:
            rows = ranked[ranked["tag"] == tag]
            per_topic = [inferred(topics[q], zip(g["rank"].tolist(), g["docno"].astype(str).tolist(), strict=True))
                         for q, g in rows.groupby("qid", sort=False) if q in topics]
            ranked_topics = set(runs[tag]["qid"].astype(str)) & set(topics)
            n = len(ranked_topics)  # a run that ranks a topic but none of its population scores 0 there
            out[tag] = {m: (sum(v[m] for v in per_topic) / n if n else 0.0) for m in ("infAP", "infNDCG")}
            out[tag]["xinfAP"] = out[tag].pop("infAP")
        return out

    return cached((snap.version, "xinfAP", policy, assessor), compute)
