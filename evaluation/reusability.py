"""Is the collection reusable: leave-one-out (how a run would score had it not been pooled), and how much
the run ranking depends on who judged. Re-exported by :mod:`evaluation.selectors`; cached per collection version.

Leave-one-out (J. Zobel, "How reliable are the results of large-scale information retrieval
experiments?", SIGIR 1998; C. Buckley, D. Dimmick, I. Soboroff and E. Voorhees, "Bias and the limits of
pooling for large collections", Information Retrieval 10, 2007; NIST's ``uniques/gloo-eval.pl``): a run's
(or team's) *unique* documents are the judged documents that no other contributing run (team) brought to
the pool. Removing them from the qrels scores the run as if it had not been pooled; a collection whose
runs barely move is reusable for new runs. By team, every run of the team is re-scored, as NIST does.
Ranks: the run's left-out score against the other runs' full scores. Kendall's tau and tau_ap compare the
full ranking with the ranking where every left-out run (team) has its left-out score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation import cache, extra_files, scoring, snapshot
from evaluation import scores as stored_scores
from evaluation.engine.leaderboard_stats import competition_ranks
from evaluation.engine.qrels import Qrels, as_arrow_strings, codes_in, topic_codes
from evaluation.scoring import EvaluationError
from evaluation.snapshot import Snapshot
from judging.agreement import ranking_correlation
from judging.policies import DEFAULT_POLICY
from judging.qrels import assessor_judgments
from pooling import strategies as S
from workbench.models import Collection

__all__ = ["LeaveOneOut", "assessor_ranking_agreement", "compute_leave_one_out", "leave_one_out",
           "ranking_agreement_rows", "stored_leave_one_out"]

LOO_COLUMNS = ["unit", "run", "team", "contributed", "unique_judged", "unique_relevant", "score", "score_loo",
               "change", "change_pct", "rank", "rank_loo", "rank_change"]


@dataclass(frozen=True)
class LeaveOneOut:
    """Per left-out run: ``table`` (columns ``LOO_COLUMNS``; change = score_loo - score, rank_change =
    rank_loo - rank, positive = falls); collection-level summary: drops (score - score_loo) and taus."""

    collection: str
    measure: str
    by: str
    source: str                 # where the contributions come from (pool provenance, or runs' top k)
    table: pd.DataFrame
    max_drop: float
    mean_drop: float
    max_drop_pct: float
    max_rank_change: int
    tau: float                  # Kendall's tau-b, full ranking vs left-out ranking
    tau_ap: float
    runs: int                   # runs ranked


# --------------------------------------------------------------------------------- leave-one-out
def contribution_provenance(collection: Collection, depth: int | None = None) -> tuple[pd.DataFrame, str]:
    """(qid, docno, tag) of what each contributing run brought to the pool, and where it comes from.

    The stored pools' provenance when one exists (and no ``depth`` is given); otherwise the top ``depth``
    (default 100) of the runs declared as contributing, ranked as pools rank them.
    """
    snap = snapshot.snapshot(collection)
    with_provenance = [p for p in snap.pools if len(p.provenance)]
    if with_provenance and depth is None:
        frame = pd.concat([p.provenance[["qid", "docno", "tag"]] for p in with_provenance], ignore_index=True)
        frame = frame.astype(str).drop_duplicates()
        names = ", ".join(p.name + (f" (depth {p.depth})" if p.depth else f" ({p.strategy})") for p in with_provenance)
        return frame[frame["tag"].isin(snap.tags)], f"provenance of pool {names}"
    depth = depth or 100
    tags = [t for t, c in snap.declared.items() if c]
    if not tags:
        return pd.DataFrame({c: pd.Series(dtype=str) for c in ("qid", "docno", "tag")}), "no contributing runs"
    ranked = S.ranked_entries(scoring.frames(collection, tags), depth)
    return ranked[["qid", "docno", "tag"]].astype(str), f"top {depth} of the contributing runs (no pool stored)"


def contribution_slice(collection: Collection, topics) -> tuple[pd.DataFrame, list[str], str]:
    """:func:`contribution_provenance`'s rows on ``topics`` only (a part of a job split by topic: the other
    topics' rows are dropped before any is made a string), the tags it names on every topic, and its source."""
    snap, wanted = snapshot.snapshot(collection), {str(t) for t in topics}
    with_provenance = [p for p in snap.pools if len(p.provenance)]
    if not with_provenance:
        frame, source = contribution_provenance(collection)
        return frame[frame["qid"].isin(wanted)], sorted(frame["tag"].unique()), source
    frames = [p.provenance[["qid", "docno", "tag"]] for p in with_provenance]
    tags = sorted({str(t) for f in frames for t in f["tag"].unique()} & set(snap.tags))
    here = pd.concat([f[f["qid"].astype(str).isin(wanted)] for f in frames], ignore_index=True)
    here = here.astype(str).drop_duplicates()
    names = ", ".join(p.name + (f" (depth {p.depth})" if p.depth else f" ({p.strategy})") for p in with_provenance)
    return here[here["tag"].isin(snap.tags)], tags, f"provenance of pool {names}"


def unique_judged(provenance: pd.DataFrame, qrels: pd.DataFrame, unit_of: dict[str, str]) -> pd.DataFrame:
    """Judged (qid, docno) pairs exactly one unit (run or team) contributed: columns qid, docno, unit, rel.

    >>> prov = pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "b"], "tag": ["r1", "r1", "r2"]})
    >>> q = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1, 1]})
    >>> unique_judged(prov, q, {"r1": "r1", "r2": "r2"})[["docno", "unit"]].values.tolist()
    [['a', 'r1']]
    """
    frame = provenance.assign(unit=provenance["tag"].map(unit_of)).dropna(subset=["unit"])
    frame = frame[["qid", "docno", "unit"]].drop_duplicates()
    units = frame.groupby(["qid", "docno"], sort=False)["unit"].transform("size").to_numpy()
    return frame[units == 1].merge(qrels.astype({"qid": str, "docno": str}), on=["qid", "docno"], how="inner")


def _mean_over(per_topic: pd.DataFrame, topics: pd.Index, name: str) -> float:
    if not len(topics):
        return 0.0
    values = per_topic[name].reindex(topics).fillna(0.0) if name in per_topic else pd.Series(0.0, index=topics)
    return float(values.mean())


@dataclass(frozen=True)
class _Rescoring:
    """What re-scoring a unit's runs without its unique judgments needs: the qrels prepared once, every run
    ranked once against them, each run's contiguous segments of that ranking, and the full scores."""

    prepared: Qrels
    ranking: object
    run_index: dict[str, int]
    run_bounds: np.ndarray
    request: tuple[str, ...]
    relevant_from: int
    full: dict
    name: str

    def changes(self, runs: list[str], mine: np.ndarray) -> dict[str, float]:
        """Per run, how much the sum of its per-topic values changes without the judgments ``mine``
        (positions in the prepared qrels): only the topics where they are need re-scoring."""
        return {tag: float(np.sum(values)) - float(np.sum(self.full[tag].column(self.name, qids, 0.0)))
                for tag, (qids, values) in self.values_without(runs, mine).items()}

    def values_without(self, runs: list[str], mine: np.ndarray) -> dict[str, tuple[list, np.ndarray]]:
        """Per run, the topics where the judgments ``mine`` are and its values there without them (topic
        order; none for a run without results on those topics)."""
        if not mine.size:
            return {}
        drop = np.zeros(len(self.prepared.keys), dtype=bool)
        drop[mine] = True
        topics = np.unique(self.prepared.keys[mine] // self.prepared.n_docs)
        # the unit's runs on the topics that change, ranked once for every page: only the judgments move
        segments = np.concatenate([
            lo + np.flatnonzero(np.isin(self.ranking.seg_topic[lo:hi], topics))
            for lo, hi in (self.run_bounds[[self.run_index[t], self.run_index[t] + 1]] for t in runs)])
        if not segments.size:
            return {}
        loo = scoring.score_ranked(self.prepared.without(drop), self.ranking.select(segments).without(drop),
                                   {self.run_index[t]: t for t in runs}, self.request, self.relevant_from)
        return {tag: (loo[tag].qids, loo[tag].values[self.name])
                for tag in runs if self.name in loo[tag].values and loo[tag].qids}


def _rescoring(collection: Collection, snap: Snapshot, measure: str, name: str, policy: str,
               assessor: str | None) -> _Rescoring:
    ranking, order = scoring.ranked(collection, policy=policy, assessor=assessor)
    return _Rescoring(
        prepared=scoring.prepared_qrels(collection, policy=policy, assessor=assessor), ranking=ranking,
        run_index={t: i for i, t in enumerate(order)},
        # each run's segments are contiguous (segments are numbered run by run), and so are their entries
        run_bounds=np.searchsorted(ranking.seg_run, np.arange(len(order) + 1)),
        request=scoring.batches([measure])[0], relevant_from=snap.relevant_from,
        full=stored_scores.evaluate(collection, [measure], policy=policy, assessor=assessor), name=name)


def _owned(owner: np.ndarray, n_units: int) -> list[np.ndarray]:
    """Per unit, the positions of the judgments only it contributed."""
    unique_judgments = np.flatnonzero(owner >= 0)
    owned = owner[unique_judgments]
    by_owner = np.argsort(owned, kind="stable")
    bounds = np.searchsorted(owned[by_owner], np.arange(n_units + 1))
    return [unique_judgments[by_owner[bounds[u]:bounds[u + 1]]] for u in range(n_units)]


def _loo_rows(collection: Collection, snap: Snapshot, measure: str, name: str, by: str, policy: str,
              assessor: str | None, depth: int | None) -> tuple[list[dict], dict[str, float], str]:
    """Re-score each unit's runs on the topics where the unit has unique judged documents (the other
    topics keep their full-qrels scores, which cannot change), against the full qrels less the unit's
    unique judgments (:meth:`Qrels.without`: no re-coding of the judgments per unit). A run's score is
    the mean of its per-topic values (its topics), so only the changed topics' values are replaced."""
    rescoring = _rescoring(collection, snap, measure, name, policy, assessor)
    provenance, source = contribution_provenance(collection, depth)
    unit_of = {t: (t if by == "run" else snap.team_of(t)) for t in sorted(provenance["tag"].unique())}
    units = sorted(set(unit_of.values()))
    unit_code = {u: i for i, u in enumerate(units)}
    tag_code, tag_names = pd.factorize(provenance["tag"])
    owner = unique_owner(provenance, rescoring.prepared, [unit_code[unit_of[t]] for t in tag_names], tag_code)
    relevant = collection.is_relevant(rescoring.prepared.grades)
    totals = {t: (float(np.sum(s.values[name])) if name in s.values else 0.0, len(s.qids))
              for t, s in rescoring.full.items()}
    scores = {t: (total / n if n else 0.0) for t, (total, n) in totals.items()}
    rows = []
    for unit, mine in zip(units, _owned(owner, len(units)), strict=True):
        runs = [unit] if by == "run" else [t for t in snap.tags if snap.team_of(t) == unit]
        changed = rescoring.changes(runs, mine)
        for tag in runs:
            total, n = totals[tag]
            rows.append({"unit": unit, "run": tag, "team": snap.teams[tag], "contributed": snap.contributed[tag],
                         "unique_judged": int(mine.size), "unique_relevant": int(relevant[mine].sum()),
                         "score": scores[tag], "score_loo": (total + changed.get(tag, 0.0)) / n if n else 0.0})
    return rows, scores, source


def unique_owner(provenance: pd.DataFrame, qrels: Qrels, unit_of_tag: list[int], tag_code: np.ndarray,
                 judged: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """For every judgment of ``qrels`` (aligned with its keys), the one unit that contributed it, or -1
    (contributed by several units, or by none): ``provenance`` rows (qid, docno, tag) with their tag codes
    ``tag_code`` and the unit of each tag code ``unit_of_tag`` (-1: not a unit); ``judged``: the rows'
    judgments (:func:`judgments_of`) when they are known already."""
    owner = np.full(len(qrels.keys), -1, dtype=np.int64)
    if not len(provenance):
        return owner
    unit = np.asarray(unit_of_tag, dtype=np.int64)[np.asarray(tag_code, dtype=np.int64)]
    rows, judgment = judged or judgments_of(provenance, qrels)
    unit = unit[rows]
    judgment = judgment[unit >= 0]
    unit = unit[unit >= 0]
    width = int(unit.max(initial=0)) + 1
    pairs = np.unique(judgment * width + unit)  # distinct (judgment, unit)
    judgment_of, unit_of = pairs // width, pairs % width
    count = np.bincount(judgment_of, minlength=len(qrels.keys))
    single = count[judgment_of] == 1
    owner[judgment_of[single]] = unit_of[single]
    return owner


def judgments_of(provenance: pd.DataFrame, qrels: Qrels) -> tuple[np.ndarray, np.ndarray]:
    """The provenance rows that are judged, and their judgments (positions in ``qrels``' keys)."""
    return qrels.lookup(topic_codes(provenance["qid"], qrels.topic_array),
                        codes_in(as_arrow_strings(provenance["docno"]), qrels.vocabulary))


def _check(measure: str, by: str) -> str:
    if by not in ("run", "team"):
        raise EvaluationError(f"leave-one-out by {by!r}: choose 'run' or 'team'")
    names = scoring.measure_names([measure])
    if len(names) != 1:
        raise EvaluationError(f"leave-one-out needs one measure value, {measure!r} gives {len(names)}")
    return names[0]


@cache.reads
def leave_one_out(collection: Collection, *, measure: str = "map", by: str = "run",
                  qrels_policy: str = DEFAULT_POLICY, assessor: str | None = None,
                  depth: int | None = None) -> LeaveOneOut:
    """Leave each contributing run (``by="run"``) or team (``by="team"``) out of the pool and re-score it
    (see the module docstring). ``depth`` forces the contributions to be the contributing runs' top
    ``depth`` instead of the stored pool's provenance (used when no pool is stored; default then 100).
    Read from the version's board extras when a job stored it (:func:`stored_leave_one_out`)."""
    found = stored_leave_one_out(collection, measure=measure, by=by, qrels_policy=qrels_policy) \
        if assessor is None and depth is None else None
    if found is not None:
        return found
    return compute_leave_one_out(collection, measure=measure, by=by, qrels_policy=qrels_policy, assessor=assessor,
                                 depth=depth)


@cache.reads
def stored_leave_one_out(collection: Collection, *, measure: str = "map", by: str = "run",
                         qrels_policy: str = DEFAULT_POLICY, previous: bool = False) -> LeaveOneOut | None:
    """The leave-one-out a job stored for the collection's current version (with ``previous``: the newest
    stored, whatever its version), or None."""
    name = _check(measure, by)
    read = extra_files.latest if previous else extra_files.stored
    found = read(collection, scoring.normalise_policy(qrels_policy), extra_files.loo_name(name, by))
    if found is None:
        return None
    table, meta = found
    return LeaveOneOut(table=table, **meta["summary"])


@cache.reads
def compute_leave_one_out(collection: Collection, *, measure: str = "map", by: str = "run",
                          qrels_policy: str = DEFAULT_POLICY, assessor: str | None = None,
                          depth: int | None = None) -> LeaveOneOut:
    """:func:`leave_one_out` computed here (a job's work: every contributing run re-scored)."""
    name = _check(measure, by)
    snap = snapshot.snapshot(collection)
    policy = scoring.normalise_policy(qrels_policy)
    key = (snap.version, "loo", name, by, policy, assessor, depth)
    return cache.cached(key, lambda: _leave_one_out(collection, snap, measure, name, by, policy, assessor, depth))


def _leave_one_out(collection, snap, measure, name, by, policy, assessor, depth) -> LeaveOneOut:
    return _from_rows(snap, name, by, *_loo_rows(collection, snap, measure, name, by, policy, assessor, depth))


def _from_rows(snap: Snapshot, name: str, by: str, rows: list[dict], scores: dict[str, float], source: str
               ) -> LeaveOneOut:
    table = pd.DataFrame(rows, columns=LOO_COLUMNS[:8])
    tags = list(scores)
    full_ranks = dict(zip(tags, competition_ranks(np.array([scores[t] for t in tags])), strict=True))
    others = np.array([scores[t] for t in tags])
    table["change"] = table["score_loo"] - table["score"]
    with np.errstate(divide="ignore", invalid="ignore"):
        table["change_pct"] = np.where(table["score"] > 0, 100 * table["change"] / table["score"], 0.0)
    table["rank"] = [int(full_ranks[t]) for t in table["run"]]
    table["rank_loo"] = [int(1 + (others > v).sum() - (scores[t] > v)) for t, v in
                         zip(table["run"], table["score_loo"], strict=True)]
    table["rank_change"] = table["rank_loo"] - table["rank"]
    substituted = dict(scores)
    substituted.update(zip(table["run"], table["score_loo"], strict=True))
    tau = tau_ap = float("nan")
    if len(tags) >= 2:
        tau, tau_ap = ranking_correlation(scores, substituted)
    drop = -table["change"]
    return LeaveOneOut(
        collection=snap.slug, measure=name, by=by, source=source, table=table[LOO_COLUMNS],
        max_drop=float(drop.max()) if len(table) else 0.0, mean_drop=float(drop.mean()) if len(table) else 0.0,
        max_drop_pct=float((-table["change_pct"]).max()) if len(table) else 0.0,
        max_rank_change=int(table["rank_change"].max()) if len(table) else 0, tau=tau, tau_ap=tau_ap,
        runs=len(tags))


# ----------------------------------------------------------------------------------------- recall
@cache.reads
def assessor_ranking_agreement(collection: Collection, *, measure: str = "map") -> pd.DataFrame:
    """For every pair of assessors who judged some topics in common: Kendall's tau-b and tau_ap
    (:func:`judging.agreement.ranking_correlation`, the first assessor as reference) between the run
    rankings under each one's qrels, the runs' ``measure`` averaged over their shared topics (Voorhees,
    "Variations in relevance judgments and the measurement of retrieval effectiveness", SIGIR 1998).

    Columns: assessor_a, assessor_b, topics, runs, tau, tau_ap. Adjudications are not an assessor here.
    """
    names = scoring.measure_names([measure])
    if len(names) != 1:
        raise EvaluationError(f"choose one measure value: {measure!r} gives {len(names)}")
    snap = snapshot.snapshot(collection)
    return cache.cached((snap.version, "assessor-rankings", names[0]),
                           lambda: _assessor_rankings(collection, snap, measure, names[0]))


def _assessor_rankings(collection, snap: Snapshot, measure: str, name: str) -> pd.DataFrame:
    columns = ["assessor_a", "assessor_b", "topics", "runs", "tau", "tau_ap"]
    judgments = assessor_judgments(collection)
    assessors = sorted(judgments["assessor"].unique()) if len(judgments) else []
    if len(assessors) < 2 or len(snap.tags) < 2:
        return pd.DataFrame(columns=columns)
    request = scoring.batches([measure])[0]
    runs = scoring.frames(collection)
    per_assessor, topics = {}, {}
    for who in assessors:
        mine = judgments[judgments["assessor"] == who].rename(columns={"grade": "rel"})[["qid", "docno", "rel"]]
        topics[who] = set(mine["qid"].astype(str))
        per_assessor[who] = scoring.evaluate_frames(mine, runs, request, snap.relevant_from)
    rows = []
    for i, a in enumerate(assessors):
        for b in assessors[i + 1:]:
            shared = pd.Index(S.sorted_topics(topics[a] & topics[b]))
            if not len(shared):
                continue
            score_a = {t: _mean_over(per_assessor[a][t].per_topic, shared, name) for t in runs}
            score_b = {t: _mean_over(per_assessor[b][t].per_topic, shared, name) for t in runs}
            tau, tau_ap = ranking_correlation(score_a, score_b)
            rows.append({"assessor_a": a, "assessor_b": b, "topics": len(shared), "runs": len(runs),
                         "tau": tau, "tau_ap": tau_ap})
    return pd.DataFrame(rows, columns=columns)


def ranking_agreement_rows(collection: Collection) -> list[dict]:
    """The agreement page's rows (registered with ``judging.extensions``): Kendall's tau between the run
    rankings under each assessor's qrels, on MAP; none with fewer than two runs or nothing to compare."""
    if collection.runs.count() < 2:
        return []
    try:
        return assessor_ranking_agreement(collection, measure="map").to_dict("records")
    except ValueError:
        return []


def run_map_over(collection: Collection, qrels_frame: pd.DataFrame, topics: list) -> dict[str, float]:
    """Each run's MAP averaged over ``topics`` (0 for a topic it does not answer) under ``qrels_frame``
    (registered with ``judging.extensions.register_system_scores`` for the machine-agreement figures)."""
    runs = scoring.frames(collection)
    if len(runs) < 2 or qrels_frame.empty:
        return {}
    name = scoring.measure_names(["map"])[0]
    scores = scoring.evaluate_frames(qrels_frame, runs, scoring.batches(["map"])[0], collection.relevant_from)
    shared = pd.Index(S.sorted_topics({str(t) for t in topics}))
    return {tag: _mean_over(scores[tag].per_topic, shared, name) for tag in runs}
