"""The ``embedding`` nugget assigner, a weak baseline with no network: the answer and each nugget embedded with
the bundled multilingual-e5-small (the ``embedding`` judge's model, ``judging.machine.embedding``), their cosine
turned into a label by two thresholds: ``support_from`` and above is support, ``partial_from`` and above partial
support, below not support. The answer is read as the query and the nuggets as passages: each answer is
embedded once, and each nugget once for all the answers of its topic. A similarity is not a judgment of whether a fact is stated: use it to sort
and to compare with people, not in their place. Django-free.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from answers.machine.base import AnswerNuggets, MachineError, NuggetVerdict
from judging.machine.base import JudgeError, Provenance, Scale
from judging.machine.declaration import JudgeKind
from judging.machine.embedding import EmbeddingJudge, encoder
from workbench.formats.declarations import declared, param

__all__ = ["ASSIGNER", "EmbeddingAssigner", "EmbeddingOptions"]


@dataclass(frozen=True)
class EmbeddingOptions:
    support_from: float = param(0.88, min=-1, max=1, help="The cosine from which a nugget is supported")
    partial_from: float = param(0.84, min=-1, max=1, help="The cosine from which a nugget is partially supported")


class EmbeddingAssigner:
    kind = "embedding"

    def __init__(self, config: dict | None = None, **_) -> None:
        self.options = ASSIGNER.read(dict(config or {}))
        if self.options["partial_from"] > self.options["support_from"]:
            raise MachineError(f"partial_from ({self.options['partial_from']:g}) must not be above support_from "
                               f"({self.options['support_from']:g})")
        self.judge = EmbeddingJudge(scale=Scale(grades=(0, 1), relevant_from=1))

    def provenance(self) -> Provenance:
        made = self.judge.provenance()
        return Provenance(model=made.model, model_version=made.model_version,
                          prompt_hash=f"answer as query, nugget as passage; support from {self.options['support_from']:g}, "
                                      f"partial from {self.options['partial_from']:g}")

    def label(self, cosine: float) -> str:
        if cosine >= self.options["support_from"]:
            return "support"
        return "partial_support" if cosine >= self.options["partial_from"] else "not_support"

    def assign(self, items: Iterable[AnswerNuggets], tick: float | None = None) -> Iterator[NuggetVerdict | None]:
        """Each answer embedded once, each distinct nugget text once (the nuggets of a topic are shared by its
        answers), the labels from their cosines."""
        try:
            model = encoder()
        except JudgeError as exc:
            raise MachineError(str(exc)) from None
        vectors: dict[str, np.ndarray] = {}
        for item in items:
            if not item.nuggets:
                continue
            if not item.text.strip():
                yield from (NuggetVerdict(item.answer_id, nid, ok=False, error="the answer has no text to read")
                            for nid, _ in item.nuggets)
                continue
            started = time.perf_counter()
            missing = list(dict.fromkeys(t for _, t in item.nuggets if t not in vectors))
            if missing:
                found = np.asarray(model.passage([t or " " for t in missing]), dtype=np.float32).reshape(len(missing), -1)
                vectors.update(zip(missing, found, strict=True))
            query = np.asarray(model.query(item.text), dtype=np.float32)
            each = int((time.perf_counter() - started) * 1000 / len(item.nuggets))
            for nid, text in item.nuggets:
                cosine = float(vectors[text] @ query)
                yield NuggetVerdict(item.answer_id, nid, ok=True, label=self.label(cosine), score=cosine,
                                    raw_reply=f"cosine {cosine:.4f}", latency_ms=each)


ASSIGNER = JudgeKind("embedding", "Nugget assigner by embedding similarity (bundled model, no network)",
                     judge_class=EmbeddingAssigner, order=10, options=declared(EmbeddingOptions),
                     help="A weak baseline: the cosine of the answer and the nugget with the bundled "
                          "multilingual-e5-small, cut into support, partial support and no support by two thresholds")
