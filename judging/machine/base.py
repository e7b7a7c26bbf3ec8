"""What every machine judge shares: the pairs it is given, the verdicts it returns, the collection's scale.
Django-free: a judge sees plain data, never a model or the database."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Pair:
    """One (topic, document) to judge, with the texts the judge reads."""

    qid: str
    docno: str
    query: str
    text: str
    topic_description: str = ""
    topic_narrative: str = ""


@dataclass(frozen=True)
class Scale:
    """The collection's grades (lowest first), their labels and definitions, and its guidelines."""

    grades: tuple[int, ...]
    relevant_from: int
    labels: dict = field(default_factory=dict)
    descriptions: dict = field(default_factory=dict)
    guidelines: str = ""


@dataclass(frozen=True, kw_only=True)
class Exchange:
    """What one question to a machine left, whatever the machine (a judge, the answers' drafter or assigner): the
    failure's one line (``error``, empty when it answered), what it said, how long it took, the tokens counted."""

    error: str = ""
    raw_reply: str = ""
    latency_ms: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: sha256 of the exact prompt sent (hex), when the machine sends one
    prompt_hash: str = ""


@dataclass(frozen=True)
class Verdict(Exchange):
    """A judge's answer for one pair: a grade (``ok``) or a failure that says why in ``error`` (one line).
    Never a guessed grade: a reply that cannot be read is a failure."""

    qid: str
    docno: str
    ok: bool
    grade: int | None = None
    score: float | None = None
    probability: float | None = None


@dataclass(frozen=True)
class Provenance:
    """What made a judge's verdicts: recorded with every one of them."""

    model: str
    model_version: str = ""
    endpoint_host: str = ""
    prompt_hash: str = ""


class JudgeError(ValueError):
    """A judge that cannot start (a bad option, a model that will not load): one line for the user."""
