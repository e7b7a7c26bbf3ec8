"""The ``embedding`` support judge, a weak baseline with no network: the cited sentence and the segment it cites
embedded with the bundled multilingual-e5-small (the ``embedding`` judge's model, ``judging.machine.embedding``),
the best cosine of the sentence (as the query) with the segment's passages turned into a label by two thresholds:
``full_from`` and above is full support, ``partial_from`` and above partial support, below no support. Each
segment's passages are embedded once for every sentence citing it. A similarity says the two speak of the same
thing, not that one supports the other: use it to sort and to compare with people, not in their place.
Django-free.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from answers.machine.base import Citation, MachineError, SupportVerdict
from judging.machine.base import JudgeError, Provenance, Scale
from judging.machine.declaration import JudgeKind
from judging.machine.embedding import EmbeddingJudge, encoder, passages
from workbench.formats.declarations import declared, param

__all__ = ["SUPPORT", "EmbeddingSupportJudge", "EmbeddingSupportOptions"]


@dataclass(frozen=True)
class EmbeddingSupportOptions:
    full_from: float = param(0.88, min=-1, max=1, help="The cosine from which a citation fully supports")
    partial_from: float = param(0.84, min=-1, max=1, help="The cosine from which a citation partially supports")


class EmbeddingSupportJudge:
    kind = "embedding"

    def __init__(self, config: dict | None = None, **_) -> None:
        self.options = SUPPORT.read(dict(config or {}))
        if self.options["partial_from"] > self.options["full_from"]:
            raise MachineError(f"partial_from ({self.options['partial_from']:g}) must not be above full_from "
                               f"({self.options['full_from']:g})")
        self.embedder = EmbeddingJudge(scale=Scale(grades=(0, 1), relevant_from=1))
        self.prompt_version = (f"sentence as query, best segment passage; full from {self.options['full_from']:g}, "
                               f"partial from {self.options['partial_from']:g}")

    def provenance(self) -> Provenance:
        made = self.embedder.provenance()
        return Provenance(model=made.model, model_version=made.model_version, prompt_hash=self.prompt_version)

    def label(self, cosine: float) -> str:
        if cosine >= self.options["full_from"]:
            return "full_support"
        return "partial_support" if cosine >= self.options["partial_from"] else "no_support"

    def judge(self, items: Iterable[Citation], tick: float | None = None) -> Iterator[SupportVerdict | None]:
        """Each sentence embedded as a query, each distinct segment's passages once; the label of the best
        cosine."""
        try:
            model = encoder()
        except JudgeError as exc:
            raise MachineError(str(exc)) from None
        segments: dict[str, np.ndarray] = {}
        for item in items:
            if not item.sentence.strip():
                yield SupportVerdict(item.pair_id, ok=False, error="the sentence has no text to read")
                continue
            if not item.segment.strip():
                yield SupportVerdict(item.pair_id, ok=False, error=f"segment {item.docno} has no text here to read")
                continue
            started = time.perf_counter()
            if item.segment not in segments:
                windows = passages(item.segment)
                segments[item.segment] = np.asarray(model.passage(windows), dtype=np.float32).reshape(len(windows), -1)
            cosine = float(np.max(segments[item.segment] @ np.asarray(model.query(item.sentence), dtype=np.float32)))
            yield SupportVerdict(item.pair_id, ok=True, label=self.label(cosine), score=cosine,
                                 raw_reply=f"cosine {cosine:.4f}",
                                 latency_ms=int((time.perf_counter() - started) * 1000))


SUPPORT = JudgeKind("embedding", "Support judge by embedding similarity (bundled model, no network)",
                    judge_class=EmbeddingSupportJudge, order=10, options=declared(EmbeddingSupportOptions),
                    help="A weak baseline: the best cosine of the cited sentence and the segment's passages with the "
                         "bundled multilingual-e5-small, cut into full, partial and no support by two thresholds")
