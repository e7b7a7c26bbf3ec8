"""The relevance rule, written once. Django-free, for the cores that get the threshold as a number
(agreement, pooling strategies, the engine); Django code asks the collection: ``Collection.is_relevant``."""

from __future__ import annotations

__all__ = ["is_relevant"]


def is_relevant(grade, relevant_from: int):
    """A grade counts as relevant when it is at least ``relevant_from``. ``grade`` is a number (gives a bool)
    or an array/Series of grades (gives a boolean array/Series; NaN, an unjudged document, is not relevant).

    >>> is_relevant(2, 1), is_relevant(0, 1)
    (True, False)
    """
    return grade >= relevant_from
