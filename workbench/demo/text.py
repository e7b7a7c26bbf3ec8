"""The one analyzer every demo run shares: identifier splitting, lower-casing, stop words, Snowball stemming.

Identifiers are split where a programmer reads word boundaries and also kept whole, so the query
``ordered dict`` and the query ``OrderedDict`` both reach ``collections.OrderedDict``:

>>> analyze("collections.OrderedDict.move_to_end(key, last=True)")[:6]
['collect', 'ordereddict', 'order', 'dict', 'move_to_end', 'move']

Stemming uses PyStemmer (Snowball English) when it is installed and is skipped otherwise; the runs
record which in their description (:data:`STEMMER`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

try:  # optional: the runs are still meaningful without stemming, only slightly weaker
    import Stemmer as _pystemmer
except ImportError:  # pragma: no cover - depends on the environment
    _pystemmer = None

# Function words of English plus the words of a question ("how do I ... in Python?").
STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again all also am an and any are as at be because been before being below
    between both but by can could did do does doing done down during each else etc every few for from
    further get gets had has have having he her here hers him his how i if in into is it its itself just
    like may me might more most much must my myself no nor not now of off on once one only or other our
    out over own per same she should so some such than that the their them then there these they this
    those through thus to too under until up upon us very via want was way we were what when where which
    while who whom why will with within without would yet you your
    """.split()
)

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*|[0-9]+")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _make_stemmer() -> tuple[str, Callable[[list[str]], list[str]]]:
    if _pystemmer is None:
        return "none", lambda words: words
    stemmer = _pystemmer.Stemmer("english")
    return "snowball-english", stemmer.stemWords


STEMMER, _stem_words = _make_stemmer()


def _split(word: str) -> list[str]:
    """The word itself (lower-cased) followed by its parts when it is a compound identifier."""
    parts = [p.lower() for piece in word.split("_") for p in _PART.findall(piece)]
    whole = word.lower()
    if len(parts) <= 1:
        return [whole]
    return [whole, *parts]


def analyze(text: str) -> list[str]:
    """Index terms of ``text``, in order, repeats kept (term frequencies matter)."""
    words = [w for token in _WORD.findall(text) for w in _split(token)]
    return _stem_words([w for w in words if w not in STOP_WORDS and len(w) > 1])
