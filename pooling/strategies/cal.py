"""Continuous active learning per topic: a classifier over the whole collection picks what to judge next.

BMI / AutoTAR (G. V. Cormack and M. R. Grossman, "Autonomy and reliability of continuous active learning
for technology-assisted review", arXiv:1504.06868, 2015; HiCAL, M. Abualsaud et al., SIGIR 2018 demo, used
it to build TREC collections), per topic:

1. the topic's text is a synthetic relevant document (and, where given, the runs' top documents are judged
   first);
2. train logistic regression on the judgments of the review so far, the synthetic document (relevant) and
   ``presumed`` documents drawn at random from the unjudged ones, presumed non-relevant (drawn afresh at
   every round); with ``anchor="bm25"`` (the default) each document has one more feature, the BM25 score
   of the topic's text for it divided by the topic's highest (the synthetic document gets 1): the
   classifier learns how far to trust the query's ranking against the words it learns from the judgments
   (``anchor="none"``: BMI's classifier alone, as before);
3. offer the ``batch`` highest-scoring unjudged documents; the batch grows by ceil(batch * growth) each
   round (1, 2, 3, ..., 10, 11, 13, 15, ...), so the number of retrainings grows with the log of the
   judgments;
4. repeat until the topic's budget is spent, the collection is exhausted or a stopping rule
   (:mod:`.stopping`) fires.

Features (:mod:`.features`) are computed once per collection; a round scores every document with one
sparse product. A stopping rule that samples (target, QBCB) first offers its side sample (uniform over the
collection, seeded per topic); side documents never train the classifier, and one the review reaches later
counts as reviewed without being judged again. ``budget`` counts the review's documents; the side sample
is reported apart (``side_judgments``).

Protocol: that of :class:`.adaptive.AdaptivePool` (``next_document`` / ``record`` / ``remaining`` /
``judged``) plus ``stop(qid, reason)`` (an organizer stops a topic by hand) and ``status(qid)``.
"""

from __future__ import annotations

import functools
import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING

from workbench.formats.ids import sorted_topics

if TYPE_CHECKING:  # scipy and scikit-learn are imported when a model is trained, numpy and pandas when a pool is
    import numpy as np  # built: not with the pool registry (every command's start-up reads CalParams)
    import pandas as pd
    import scipy.sparse as sp

    from .features import Features

from .declaration import declared, param
from .stopping import RULES, StopDecision, StopRule, make_rule, recall_estimate, relevant_estimate

__all__ = ["ANCHORS", "CalParams", "CalPool", "Corpus"]

#: what the classifier's ranking is anchored to besides the judgments: the topic text's BM25, or nothing
ANCHORS = ("bm25", "none")


@dataclass(frozen=True)
class CalParams:
    """What a ``cal`` pool is built with: validated once, stored on the pool, passed as one object. Each
    parameter a user gives is declared here (:func:`.declaration.param`); ``budget`` (review judgments
    per topic, None: until the collection or a stopping rule ends it) and ``seed`` (of every random
    draw) come from the pool's own budget and seed.
    """

    budget: int | None = 100
    growth: float = param(0.1, min=0, max=10, help="Batch growth per round")
    presumed: int = param(100, min=1, max=100000, unit="documents",
                          help="Random documents presumed non-relevant per round")
    seed_depth: int = param(0, min=0, max=100000, unit="documents", help="The runs' fused top documents judged first")
    c: float = param(1.0, min=0, min_open=True, max=10**6, label="C",
                     help="Logistic regression's inverse regularisation")
    query_weight: float = param(1.0, min=0, max=1000,
                                help="Weight of the topic's text as a relevant document")
    anchor: str = param("bm25", choices=ANCHORS, help="bm25: the topic text's BM25 score is a feature; none: "
                                                      "the classifier alone")
    seed: int = 0
    stop: str | None = param(None, choices=RULES, label="Stopping rule", help="When a topic stops before its budget "
                                                                              "(empty: never)")
    target_recall: float = param(0.8, min=0, max=1, min_open=True, max_open=True,
                                 help="Recall the target and qbcb rules aim at")
    confidence: float = param(0.95, min=0, max=1, min_open=True, max_open=True,
                              help="Confidence of the stated recall")
    sample_size: int = param(1000, min=1, max=10**6, unit="documents", help="qbcb: side sample per topic")

    def __post_init__(self):
        """Each value within its declared bounds (one line naming each that is not), then the stopping rule
        (an unknown rule is refused by name)."""
        low_budget = self.budget is not None and self.budget < 1
        problems = [f"budget must be at least 1, not {self.budget}"] if low_budget else []
        problems += [p.problem(getattr(self, p.name), p.label or p.name.replace("_", " ")) for p in _declared()
                     if p.name != "stop"]
        if any(problems):
            raise ValueError("; ".join(p for p in problems if p))
        self.rule()

    def rule(self) -> StopRule:
        return make_rule(self.stop, target_recall=self.target_recall, confidence=self.confidence,
                         sample_size=self.sample_size)

    def as_dict(self) -> dict:
        """JSON for the pool's record; ``CalParams(**as_dict())`` rebuilds it."""
        return asdict(self)

    @classmethod
    def stored(cls, record: Mapping) -> CalParams:
        """From a pool's record (:meth:`as_dict`). A pool built before the anchor existed (no ``anchor`` in
        its record) goes on as it was built: its classifier alone (``anchor="none"``)."""
        return cls(**{"anchor": "none", **record})

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def parse(cls, pairs: Sequence[str]) -> CalParams:
        """From ``KEY=VALUE`` words (the command's ``--cal``, the form's field), each checked against the
        declared fields: ``CalParams.parse(["growth=0.2", "stop=target"])``."""
        kinds = {f.name: f.type for f in fields(cls)}
        values: dict = {}
        for pair in pairs:
            key, sep, text = pair.partition("=")
            key = key.strip().replace("-", "_")
            if not sep or key not in kinds:
                raise ValueError(f"{pair!r} is not KEY=VALUE with KEY one of {', '.join(kinds)}")
            values[key] = _value(key, kinds[key], text.strip())
        return cls(**values)


@functools.cache
def _declared() -> tuple:
    return declared(CalParams)


@dataclass(frozen=True)
class Corpus:
    """What cal learns over: the collection's features and the topics' texts (qid -> text)."""

    features: Features
    topics: Mapping[str, str]


def _value(key: str, kind: str, text: str):
    if text.lower() in ("none", "") and "None" in kind:
        return None
    try:
        if kind.startswith("int"):
            return int(text)
        if kind.startswith("float"):
            return float(text)
    except ValueError:
        raise ValueError(f"{key}={text!r} is not a number") from None
    return text


class _Topic:
    def __init__(self, n_docs: int, budget: int | None, rng: np.random.Generator, query: sp.csr_matrix,
                 seeds: list[int], anchor: np.ndarray | None = None):
        import numpy as np

        self.relevance = np.full(n_docs, -1, dtype=np.int8)  # -1 unknown, 0 / 1 judged (review or side)
        self.reviewed = np.zeros(n_docs, dtype=bool)
        self.side_member = np.zeros(n_docs, dtype=bool)
        self.side_positives = 0
        self.side_found = 0
        self.review_labels: list[bool] = []
        self.review: list[tuple[int, bool]] = []
        self.side: list[tuple[int, bool]] = []
        self.side_order = rng.permutation(n_docs)
        self.queue: deque[int] = deque(dict.fromkeys(seeds))
        self.batch = 1
        self.rounds = 0
        self.budget = budget
        self.rng = rng
        self.query = query
        self.anchor = anchor  # the topic text's BM25 per document over its highest, or None
        self.pending: int | None = None
        self.decision: StopDecision | None = None

    def sample_counts(self) -> tuple[int, int]:
        """(relevant documents in the side sample, how many of them the review has reached)."""
        return self.side_positives, self.side_found

    def add_side(self, doc: int, relevant: bool) -> None:
        self.side.append((doc, relevant))
        self.side_member[doc] = True
        self.side_positives += relevant
        self.side_found += relevant and bool(self.reviewed[doc])

    def add_review(self, doc: int, relevant: bool) -> None:
        self.reviewed[doc] = True
        self.review.append((doc, relevant))
        self.review_labels.append(relevant)
        self.side_found += relevant and bool(self.side_member[doc])


class CalPool:
    """Continuous active learning over ``features`` for the topics in ``topics`` (qid -> text)."""

    name = "cal"

    def __init__(self, features: Features, topics: Mapping[str, str], params: CalParams | None = None, *,
                 stop_rule: StopRule | None = None, seed_docs: Mapping[str, Sequence[str]] | None = None,
                 budgets: Mapping[str, int] | None = None):
        self.features = features
        self.cal = params or CalParams()
        self.rule = stop_rule or self.cal.rule()
        self.texts = {str(q): str(t) for q, t in topics.items()}
        self.seed_docs = {str(q): list(d) for q, d in (seed_docs or {}).items()}
        self.budgets = {q: (budgets or {}).get(q, self.cal.budget) for q in self.texts}
        import pandas as pd

        #: the runs' documents it was seeded with (qid, docno, tag, rank), for provenance
        self.ranked = pd.DataFrame({"qid": [], "docno": [], "tag": [], "rank": []})
        self.params = {"runs": [], **self.cal.as_dict()}
        self._index = features.index()
        self._topics: dict[str, _Topic] = {}

    # -- protocol ---------------------------------------------------------------------------------
    @property
    def topics(self) -> list[str]:
        return sorted_topics(self.texts)

    def next_document(self, qid: str) -> str | None:
        t = self._topic(qid)
        if t is None:
            return None
        if t.pending is None:
            t.pending = self._next(t)
        return None if t.pending is None else str(self.features.docnos[t.pending])

    def record(self, qid: str, docno: str, relevant: bool) -> bool:
        """Record a judgment of the offered document (or of any unjudged one). False if unknown or judged."""
        t = self._topic(qid)
        doc = None if t is None else self._index.get(str(docno))
        if doc is None or t.relevance[doc] >= 0:
            return False
        relevant = bool(relevant)
        t.relevance[doc] = int(relevant)
        if t.pending == doc:
            t.pending = None
        if self._sampling(t) and (not t.side or t.side[-1][0] != doc) and doc == self._side_head(t):
            t.add_side(doc, relevant)
        else:
            self._reviewed(t, doc, relevant)
        return True

    def remaining(self, qid: str) -> int:
        t = self._topic(qid)
        if t is None or t.decision is not None:
            return 0
        left = len(self.features) - int(t.reviewed.sum())
        return left if t.budget is None else max(min(t.budget - len(t.review), left), 0)

    def judged(self, qid: str) -> pd.DataFrame:
        """The review's judgments in order: docno, relevant (the side sample is in :meth:`status`)."""
        import pandas as pd

        t = self._topic(qid)
        rows = [] if t is None else t.review
        return pd.DataFrame({"docno": [str(self.features.docnos[d]) for d, _ in rows],
                             "relevant": [r for _, r in rows], "tag": [None] * len(rows)})

    def stop(self, qid: str, reason: str = "stopped by hand") -> None:
        t = self._topic(qid)
        if t is not None and t.decision is None:
            t.decision = StopDecision(True, "hand", reason, len(t.review))
            t.pending = None

    def status(self, qid: str) -> dict:
        """Stopping state and estimates of a topic (what the dashboard and the simulation show)."""
        t = self._topic(qid)
        positives, found = t.sample_counts()
        decision = t.decision or self.rule.check(t.review_labels, positives, found)
        found_all = sum(r for _, r in t.review)
        return {"decision": decision.as_dict(), "judgments": len(t.review), "found": found_all,
                "side_judgments": len(t.side), "side_relevant": positives, "rounds": t.rounds,
                "recall_estimate": recall_estimate(found, positives) if self.rule.samples else None,
                "relevant_estimate": (relevant_estimate(positives, len(t.side), len(self.features), found_all)
                                      if self.rule.name == "qbcb" else None)}

    # -- internals --------------------------------------------------------------------------------
    def _topic(self, qid: str) -> _Topic | None:
        qid = str(qid)
        t = self._topics.get(qid)
        if t is None and qid in self.texts:
            from .ranking import topic_rng  # pandas and pyarrow: with the first topic, not with the registry

            seeds = [self._index[d] for d in self.seed_docs.get(qid, [])[:self.cal.seed_depth]
                     if d in self._index]
            t = _Topic(len(self.features), self.budgets[qid], topic_rng(self.cal.seed, qid),
                       self.features.query(self.texts[qid]), seeds, self._anchor(self.texts[qid]))
            self._topics[qid] = t
        return t

    def _anchor(self, text: str) -> np.ndarray | None:
        """The text's BM25 per document over its highest; None if not anchored, if the features predate
        BM25 (stored at version 1, until the features job recomputes them) or if no document has a word."""
        import numpy as np

        scores = self.features.bm25(text) if self.cal.anchor == "bm25" else None
        if scores is None or not scores.max() > 0:
            return None
        return (scores / scores.max()).astype(np.float32)

    def _sampling(self, t: _Topic) -> bool:
        return self.rule.samples and self.rule.wants_sample(len(t.side), t.side_positives, len(self.features))

    def _side_head(self, t: _Topic) -> int | None:
        for doc in t.side_order[len(t.side):]:
            return int(doc)
        return None

    def _next(self, t: _Topic) -> int | None:
        if t.decision is not None or (t.budget is not None and len(t.review) >= t.budget):
            return None
        while self._sampling(t):
            doc = self._side_head(t)
            if t.relevance[doc] < 0:
                return doc
            t.add_side(doc, bool(t.relevance[doc]))  # judged before it was drawn: no new judgment
        while True:
            while t.queue and t.reviewed[t.queue[0]]:
                t.queue.popleft()
            if not t.queue and not self._refill(t):
                return None
            doc = t.queue[0]
            if t.relevance[doc] < 0:
                return doc
            t.queue.popleft()
            self._reviewed(t, doc, bool(t.relevance[doc]))  # known from the side sample: no new judgment
            if t.decision is not None or (t.budget is not None and len(t.review) >= t.budget):
                return None

    def _reviewed(self, t: _Topic, doc: int, relevant: bool) -> None:
        t.add_review(doc, relevant)
        if t.queue and t.queue[0] == doc:
            t.queue.popleft()
        if self.rule.name != "none":
            positives, found = t.sample_counts()
            decision = self.rule.check(t.review_labels, positives, found)
            if decision.stopped:
                t.decision = decision

    def _refill(self, t: _Topic) -> bool:
        """Retrain and queue the next batch; False when every document has been reviewed."""
        import numpy as np

        scores = self._scores(t)
        scores[t.reviewed] = -np.inf
        open_ = int((~t.reviewed).sum())
        if open_ == 0:
            return False
        size = min(t.batch, open_)
        top = np.argpartition(-scores, size - 1)[:size] if size < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((top, -scores[top]))]
        t.queue.extend(int(d) for d in top if not t.reviewed[d])
        t.batch += math.ceil(t.batch * self.cal.growth)
        t.rounds += 1
        return bool(t.queue)

    def _scores(self, t: _Topic) -> np.ndarray:
        import numpy as np

        matrix = self.features.matrix
        judged = np.array([d for d, _ in t.review], dtype=np.int64)
        labels = np.array([int(r) for _, r in t.review], dtype=np.int64)
        unknown = np.flatnonzero((t.relevance < 0) & ~t.side_member)
        presumed = t.rng.choice(unknown, size=min(self.cal.presumed, len(unknown)), replace=False)
        import scipy.sparse as sp
        from sklearn.linear_model import LogisticRegression

        rows = sp.vstack([t.query, matrix[judged], matrix[presumed]]).tocsr()
        y = np.concatenate([[1], labels, np.zeros(len(presumed), dtype=np.int64)])
        if y.min() == y.max():  # a single class (no unjudged document left to presume): rank by the topic text
            return (matrix @ t.query.T).toarray().ravel()
        # fit on the columns the training rows use (the others get weight 0 under L2 anyway): a fit then
        # costs the training set's size, not the 2**20 hashed columns
        columns = np.unique(rows.indices)
        x = rows[:, columns]
        if t.anchor is not None:  # one more column: the synthetic document is as good as the best match
            x = sp.hstack([x, np.concatenate([[1.0], t.anchor[judged], t.anchor[presumed]])[:, None]]).tocsr()
        model = LogisticRegression(C=self.cal.c, class_weight="balanced", solver="liblinear")
        weight = np.ones(len(y))
        weight[0] = self.cal.query_weight
        model.fit(x, y, sample_weight=weight)
        coef = model.coef_.ravel()
        weights = np.zeros(matrix.shape[1], dtype=np.float32)
        weights[columns] = coef[:len(columns)]
        scores = matrix @ weights
        return scores if t.anchor is None else scores + np.float32(coef[-1]) * t.anchor
