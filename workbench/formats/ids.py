"""Topic identifiers in natural order: one rule for every page, export and pool. Django-free, pandas-free.

The rule: when every qid of a set is an integer (an optional minus sign, then digits), they sort as
numbers (2 before 10, -1 before 0); otherwise they all sort as strings (code point order). Qids that are
equal as numbers ("1" and "01") keep the order they came in.

>>> sorted_topics(["10", "2", "-1"])
['-1', '2', '10']
>>> sorted_topics(["b", "10", "2"])
['10', '2', 'b']
>>> natural_positions(["10", "2", "10"])
[1, 0, 2]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["all_integers", "natural_positions", "sorted_topics"]

_INTEGER = re.compile(r"-?\d+")


def all_integers(qids: Iterable[str]) -> bool:
    """True when every qid is an integer (so that the set sorts numerically)."""
    return all(_INTEGER.fullmatch(q) is not None for q in qids)


def sorted_topics(qids: Iterable) -> list[str]:
    """The distinct qids (as strings) in natural order."""
    distinct = list(dict.fromkeys(str(q) for q in qids))
    return [distinct[i] for i in natural_positions(distinct)]


def natural_positions(qids: Sequence) -> list[int]:
    """Positions that put ``qids`` (repeats allowed) in natural order; a stable sort."""
    names = [str(q) for q in qids]
    if all_integers(names):
        keys: list = [int(q) for q in names]
    else:
        keys = names
    return sorted(range(len(names)), key=keys.__getitem__)
