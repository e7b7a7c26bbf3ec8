"""Parsing the pool parameters people type, the same for the command and the console's form."""

from __future__ import annotations

from pooling.strategies.declared.common import stratum
from workbench.models import Collection

__all__ = ["stratum", "topic_depths"]


def topic_depths(default: int | None, pairs: list[str], collection: Collection) -> dict[str, int]:
    """{qid: k} for every topic: the named ones from QID=K, the others the default depth."""
    named = {}
    for pair in pairs:
        qid, sep, k = pair.partition("=")
        if not sep or not k.strip().isdigit() or int(k) < 1:
            raise ValueError(f"--topic-depth {pair!r} is not QID=K with K a positive integer")
        named[qid.strip()] = int(k)
    qids = list(collection.topics.values_list("qid", flat=True))
    unknown = sorted(set(named) - set(qids))
    if unknown:
        raise ValueError(f"--topic-depth names topics not in collection {collection.slug!r}: {', '.join(unknown)}")
    if default is None and len(named) < len(qids):
        raise ValueError("give --depth K for the topics --topic-depth does not name")
    return {q: named.get(q, default) for q in qids}
