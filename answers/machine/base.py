"""What the answers' machines share: the texts they are given and what they return. Django-free: a machine sees
plain data, never a model or the database; the answers app records what it says.

A *drafter* reads a topic's query and its judged relevant segments and proposes nuggets (atomic facts, each
``vital`` or ``okay``); an *assigner* reads an answer and a bank's nuggets and labels each nugget ``support``,
``partial_support`` or ``not_support`` (the labels of ``evaluation.engine.nuggets``); a *support judge* reads a
sentence of an answer and a segment it cites and says whether the segment supports it: ``full_support``,
``partial_support`` or ``no_support`` (the labels of the TREC 2024 RAG support study and of
``answers.models.SupportJudgment``)."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.engine.nuggets import ASSIGNMENTS, IMPORTANCES
from judging.machine.base import Exchange

__all__ = ["IMPORTANCES", "LABELS", "SUPPORT_LABELS", "AnswerNuggets", "Citation", "Draft", "DraftedNugget",
           "MachineError", "NuggetVerdict", "Segment", "SupportVerdict", "TopicSegments"]

#: an assigner's labels, the strongest first
LABELS = tuple(ASSIGNMENTS)
#: a support judge's labels, the strongest first
SUPPORT_LABELS = ("full_support", "partial_support", "no_support")


class MachineError(ValueError):
    """A machine that cannot start (a bad option, no endpoint, a model that will not load): one line."""


@dataclass(frozen=True)
class Segment:
    """One judged relevant segment of a topic, as the drafter reads it."""

    docno: str
    text: str


@dataclass(frozen=True)
class TopicSegments:
    """What a drafter reads for one topic: its query (title, and description when there is one) and segments."""

    qid: str
    query: str
    segments: tuple[Segment, ...]
    description: str = ""


@dataclass(frozen=True)
class DraftedNugget:
    text: str
    importance: str


@dataclass(frozen=True)
class Draft(Exchange):
    """A drafter's answer for one topic: nuggets (``ok``) or a failure saying why in one line (``error``).
    Never a guessed bank: a reply that cannot be read is a failure, and nothing of it is kept but ``raw_reply``."""

    qid: str
    ok: bool
    nuggets: tuple[DraftedNugget, ...] = ()


@dataclass(frozen=True)
class AnswerNuggets:
    """One answer against a bank: the answer's id and text, the topic's query and the nuggets as (id, text)."""

    answer_id: str
    qid: str
    query: str
    text: str
    nuggets: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class NuggetVerdict(Exchange):
    """An assigner's label of one nugget for one answer, or a failure saying why (``ok`` False, ``error``)."""

    answer_id: str
    nugget_id: str
    ok: bool
    label: str = ""
    score: float | None = None


@dataclass(frozen=True)
class Citation:
    """One citation to judge: a sentence of an answer (``pair_id`` names the pair for the caller), the topic's
    query, and the text of the segment the sentence cites."""

    pair_id: str
    qid: str
    query: str
    sentence: str
    docno: str
    segment: str


@dataclass(frozen=True)
class SupportVerdict(Exchange):
    """A support judge's label of one citation, or a failure saying why (``ok`` False, ``error``)."""

    pair_id: str
    ok: bool
    label: str = ""
    score: float | None = None
