"""Adaptive pools: the next document to judge depends on the judgments made so far.

The candidates are the documents that the contributing runs rank within ``depth`` (100 by default, as in
the papers below). Every strategy follows each run down its ranking; a document is judged once, however
many runs retrieved it, and a judgment costs one unit of the topic's budget.

Strategies and the rules they follow:

* :class:`MoveToFront` -- G. V. Cormack, C. R. Palmer and C. L. A. Clarke, "Efficient construction of
  large test collections", SIGIR 1998, Section 6: "The submissions themselves are prioritized, and the
  top-ranked document from the submission with the top priority is judged. If it is judged relevant (or
  has been previously judged relevant because it appeared in some other submission) its priority is set
  to the maximum. Otherwise, its priority is reduced." Here every run starts at the maximum priority 0; a
  non-relevant document lowers the run's priority by one, a relevant one puts it back to 0, so a run's
  priority is minus the number of non-relevant documents met since its last relevant one (the paper's
  estimate of the reciprocal of the probability of relevance). A run's next document that was already
  judged (through another run, or before the pool was extended) is applied the same way, at no cost:
  relevant moves the run to the front, non-relevant lowers its priority. Ties between runs of equal
  priority go to the run that most recently found a relevant document ("the next target for judging
  coming from the run in which a relevant document was most recently found", Section 7), so a run stays
  in front while it returns relevant documents; runs that have not found one yet are drawn at random.
* :class:`MaxMean` -- D. E. Losada, J. Parapar and A. Barreiro, "Feeling lucky? Multi-armed bandits for
  ordering judgements in pooling-based evaluation", ACM SAC 2016, and "Multi-armed bandits for
  adjudicating documents in pooling-based evaluation of information retrieval systems", Information
  Processing & Management 53(5):1005-1025, 2017. Each run is an arm; pulling it judges the run's
  highest-ranked document that has not been judged (judged documents are skipped, a run with no
  unjudged document left cannot be pulled); the reward is 1 for a relevant document, 0 otherwise. The
  probability that an arm yields a relevant document has a uniform Beta(1, 1) prior; after ``rel_j``
  relevant and ``nrel_j`` non-relevant rewards the posterior is Beta(1 + rel_j, 1 + nrel_j), whose mean
  (1 + rel_j) / (2 + rel_j + nrel_j) MaxMean maximises. Ties (at the start every arm has mean 1/2) are
  broken at random.
* :class:`BayesianBandit` -- the same papers' Bayesian bandits (Thompson sampling): draw
  theta_j ~ Beta(1 + rel_j, 1 + nrel_j) for every arm that can still be pulled and pull the largest draw.

Which arms a judgment updates (``shared``, bandits only). ``shared=False`` (default): only the pulled arm,
as in the bandit formulation of the papers above (one pull, one reward, for the arm pulled); a judgment
recorded without a pull (one that existed before the pool was extended) updates no arm. ``shared=True``:
every run that retrieved the document within the depth gets the reward (a full-information variant:
each judgment is evidence about every run that ranks the document). Move-to-Front ignores ``shared``:
its rule above already uses every judgment a run reaches.

The random choices (ties, Thompson draws) come from a generator seeded by (seed, qid), so a pool is
reproducible.

Protocol (what the judging queue uses)::

    pool = MaxMean(runs, budget=500, seed=7)
    docno = pool.next_document("301")      # None when the budget is spent or the candidates run out
    pool.record("301", docno, relevant=True)

``next_document`` returns the same document until it is recorded. ``record`` accepts any candidate (for
example judgments that already exist when a pool is extended): it is marked judged and never offered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from .depth import contributing_runs
from .fusion import Budget, resolve_budget
from .ranking import Depth, Runs, ranked_entries, sorted_topics, topic_rng
from .result import PoolResult, make_entries, restrict_provenance, union_of_lists

__all__ = ["AdaptivePool", "BayesianBandit", "MaxMean", "MoveToFront", "replay"]


class _Topic:
    """Per-topic state: the run lists as document codes, pointers, judgments and arm statistics."""

    def __init__(self, ranked: pd.DataFrame, budget: int, rng: np.random.Generator):
        codes, docs = pd.factorize(ranked["docno"])
        self.docs = np.asarray(docs, dtype=object)
        self.index = {d: i for i, d in enumerate(self.docs)}
        arm_codes, arm_tags = pd.factorize(ranked["tag"])
        self.tags = [str(t) for t in arm_tags]
        order = np.lexsort((ranked["rank"].to_numpy(), arm_codes))
        codes, arm_codes = codes[order], arm_codes[order]
        bounds = np.searchsorted(arm_codes, np.arange(len(self.tags) + 1))
        self.lists = [codes[bounds[a]:bounds[a + 1]] for a in range(len(self.tags))]
        by_doc = np.argsort(codes, kind="stable")
        self.doc_arm_ptr = np.searchsorted(codes[by_doc], np.arange(len(self.docs) + 1))
        self.doc_arms = arm_codes[by_doc]
        n = len(self.tags)
        self.ptr = np.zeros(n, dtype=np.int64)  # position of each run's highest-ranked unjudged document
        self.length = np.array([len(x) for x in self.lists], dtype=np.int64)
        self.relevance = np.full(len(self.docs), -1, dtype=np.int8)  # -1 unjudged, 0 / 1
        self.rel = np.zeros(n)
        self.nrel = np.zeros(n)
        self.budget = budget
        self.spent = 0
        self.pending: tuple[int, int] | None = None  # (document, arm) offered and not yet recorded
        self.rng = rng
        self.history: list[tuple[int, int, bool]] = []  # (doc, arm or -1, relevant)

    def alive(self) -> np.ndarray:
        """Runs that still have an unjudged document."""
        return self.ptr < self.length

    def head(self, arm: int) -> int:
        """The run's highest-ranked unjudged document."""
        return int(self.lists[arm][self.ptr[arm]])

    def arms_of(self, doc: int) -> np.ndarray:
        return self.doc_arms[self.doc_arm_ptr[doc]:self.doc_arm_ptr[doc + 1]]

    def mark_judged(self, doc: int, relevant: bool) -> None:
        self.relevance[doc] = 1 if relevant else 0
        for arm in self.arms_of(doc):
            lst, p, n = self.lists[arm], self.ptr[arm], self.length[arm]
            while p < n and self.relevance[lst[p]] >= 0:
                p += 1
            self.ptr[arm] = p

    def pick(self, values: np.ndarray, alive: np.ndarray) -> int:
        """Index of the largest value among live arms, ties broken at random."""
        masked = np.where(alive, values, -np.inf)
        best = np.flatnonzero(masked == masked.max())
        return int(best[0] if len(best) == 1 else self.rng.choice(best))


class AdaptivePool:
    """Base class: candidates, budget, the next-document / record protocol. Subclasses choose the arm."""

    name = "adaptive"

    def __init__(
        self,
        runs: Runs,
        budget: Budget = None,
        *,
        depth: Depth = 100,
        total_budget: int | None = None,
        seed: int = 0,
        shared: bool = False,
        tags: Iterable[str] | None = None,
        teams: Mapping[str, str] | None = None,
        priorities: Mapping[str, int] | None = None,
        runs_per_team: int | None = None,
    ):
        chosen = contributing_runs(runs, tags=tags, teams=teams, priorities=priorities,
                                   runs_per_team=runs_per_team)
        self.ranked = ranked_entries(chosen, depth)[["qid", "docno", "tag", "rank"]]
        capacity = self.ranked.drop_duplicates(["qid", "docno"]).groupby("qid", sort=False).size().to_dict()
        self.budgets = resolve_budget(budget, total_budget, capacity)
        self.seed = seed
        self.shared = bool(shared)
        self.params = {"depth": dict(depth) if isinstance(depth, Mapping) else depth, "runs": list(chosen),
                       "budget": dict(budget) if isinstance(budget, Mapping) else budget,
                       "total_budget": total_budget, "seed": seed, "shared": self.shared}
        self._groups = dict(tuple(self.ranked.groupby("qid", sort=False)))
        self._topics: dict[str, _Topic] = {}

    # -- protocol ---------------------------------------------------------------------------------
    @property
    def topics(self) -> list[str]:
        return sorted_topics(self.budgets)

    def next_document(self, qid: str) -> str | None:
        """The document to judge next for ``qid``, or None when the budget or the candidates are spent."""
        t = self._topic(qid)
        if t is None:
            return None
        if t.pending is not None:
            return str(t.docs[t.pending[0]])
        if t.spent >= t.budget:
            return None
        alive = t.alive()
        if not alive.any():
            return None
        arm = self._choose(t, alive)
        t.pending = (t.head(arm), arm)
        return str(t.docs[t.pending[0]])

    def record(self, qid: str, docno: str, relevant: bool) -> bool:
        """Record a judgment. Returns False (and changes nothing) for a non-candidate or judged document."""
        t = self._topic(qid)
        doc = None if t is None else t.index.get(docno)
        if doc is None or t.relevance[doc] >= 0:
            return False
        relevant = bool(relevant)
        arm = -1
        if t.pending is not None and t.pending[0] == doc:
            arm = t.pending[1]
            t.pending = None
        t.mark_judged(doc, relevant)
        t.spent += 1
        t.history.append((doc, arm, relevant))
        credited = t.arms_of(doc) if self.shared else ([arm] if arm >= 0 else [])
        for a in credited:
            if relevant:
                t.rel[a] += 1
            else:
                t.nrel[a] += 1
        self._after(t, arm, relevant)
        if t.pending is not None and t.relevance[t.pending[0]] >= 0:
            t.pending = None
        return True

    def remaining(self, qid: str) -> int:
        """Judgments left in the topic's budget."""
        t = self._topic(qid)
        return 0 if t is None else max(t.budget - t.spent, 0)

    def judged(self, qid: str) -> pd.DataFrame:
        """The judgments recorded for ``qid`` in order: docno, relevant, tag (the pulled run, or None)."""
        t = self._topic(qid)
        rows = [] if t is None else t.history
        return pd.DataFrame({"docno": [str(t.docs[d]) for d, _, _ in rows],
                             "relevant": [r for _, _, r in rows],
                             "tag": [t.tags[a] if a >= 0 else None for _, a, _ in rows]})

    def result(self) -> PoolResult:
        """The documents judged so far as a :class:`PoolResult` (pool_rank = order of judgment)."""
        frames = [self.judged(q).assign(qid=q) for q in self.topics]
        judged = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["qid", "docno"])
        union = union_of_lists(self.ranked)
        order = judged[["qid", "docno"]].astype(str).merge(union, on=["qid", "docno"], how="left")
        entries = make_entries(order)
        return PoolResult(self.name, dict(self.params), entries, restrict_provenance(self.ranked, entries))

    # -- strategy hooks ---------------------------------------------------------------------------
    def _choose(self, t: _Topic, alive: np.ndarray) -> int:
        """The arm to pull: a run in ``alive`` (one with an unjudged document); its head is offered."""
        raise NotImplementedError

    def _init(self, t: _Topic) -> None:
        """Set up per-topic strategy state."""

    def _after(self, t: _Topic, arm: int, relevant: bool) -> None:
        """Update strategy state after a judgment (``arm`` = pulled run, -1 if none)."""

    def _topic(self, qid: str) -> _Topic | None:
        qid = str(qid)
        t = self._topics.get(qid)
        if t is None and qid in self._groups:
            t = _Topic(self._groups[qid], self.budgets.get(qid, 0), topic_rng(self.seed, qid))
            self._init(t)
            self._topics[qid] = t
        return t


class MoveToFront(AdaptivePool):
    """Move-to-Front pooling (Cormack, Palmer and Clarke, SIGIR 1998, Section 6); see the module docstring.

    State per run: ``priority`` (0 = the maximum; minus the non-relevant documents met since the run's
    last relevant one), ``front`` (when the run last found a relevant document, 0 = never) and ``seen``
    (how far down its ranking the run has been examined, judged documents included).
    """

    name = "mtf"

    def _init(self, t: _Topic) -> None:
        n = len(t.tags)
        t.priority = np.zeros(n)
        t.front = np.zeros(n)
        t.clock = 0
        t.seen = np.zeros(n, dtype=np.int64)

    def _choose(self, t: _Topic, alive: np.ndarray) -> int:
        while True:
            open_ = t.seen < t.length
            # a document is only passed over once judged, so some run with an unjudged document is open
            top = np.where(open_, t.priority, -np.inf)
            tied = open_ & (top == top.max())
            latest = np.where(tied, t.front, -np.inf)
            best = np.flatnonzero(latest == latest.max())
            arm = int(best[0] if len(best) == 1 else t.rng.choice(best))
            doc = int(t.lists[arm][t.seen[arm]])
            if t.relevance[doc] < 0:
                return arm  # its next document is unjudged: judge it (t.head(arm) is this document)
            # already judged (through another run, or before the pool was extended): apply it, no cost
            t.seen[arm] += 1
            self._apply(t, arm, bool(t.relevance[doc]))

    def _after(self, t: _Topic, arm: int, relevant: bool) -> None:
        if arm >= 0:  # the offered document was the head of the run's examination
            t.seen[arm] += 1
            self._apply(t, arm, relevant)

    @staticmethod
    def _apply(t: _Topic, arm: int, relevant: bool) -> None:
        if relevant:
            t.priority[arm] = 0.0  # the maximum
            t.clock += 1
            t.front[arm] = t.clock
        else:
            t.priority[arm] -= 1.0


class MaxMean(AdaptivePool):
    """MaxMean bandit (Losada, Parapar and Barreiro, SAC 2016 / IP&M 2017): highest Beta posterior mean."""

    name = "maxmean"

    def _choose(self, t: _Topic, alive: np.ndarray) -> int:
        return t.pick((1.0 + t.rel) / (2.0 + t.rel + t.nrel), alive)


class BayesianBandit(AdaptivePool):
    """Bayesian bandit / Thompson sampling (Losada, Parapar and Barreiro, SAC 2016 / IP&M 2017)."""

    name = "bandit"

    def _choose(self, t: _Topic, alive: np.ndarray) -> int:
        return t.pick(t.rng.beta(1.0 + t.rel, 1.0 + t.nrel), alive)


def replay(pool: AdaptivePool, is_relevant: Callable[[str, str], bool],
           topics: Iterable[str] | None = None) -> pd.DataFrame:
    """Judge until every topic's budget is spent, asking ``is_relevant(qid, docno)`` (a simulated assessor).

    Returns qid, step (1-based), docno, relevant, tag: the judgments in the order they were made.
    """
    frames = []
    for qid in (pool.topics if topics is None else [str(q) for q in topics]):
        while (docno := pool.next_document(qid)) is not None:
            pool.record(qid, docno, is_relevant(qid, docno))
        judged = pool.judged(qid)
        judged.insert(0, "step", np.arange(1, len(judged) + 1))
        judged.insert(0, "qid", qid)
        frames.append(judged)
    if not frames:
        return pd.DataFrame(columns=["qid", "step", "docno", "relevant", "tag"])
    return pd.concat(frames, ignore_index=True)
