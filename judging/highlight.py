"""Highlighting a topic's query terms in a document, for the judging page (Django-free)."""

from __future__ import annotations

import html
import re

STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few find for from further had has have having how
i if in into is it its itself just me more most my no nor not of off on once only or other our out over own
same should so some such than that the their them then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your document
documents relevant information describe discuss identify use using used way ways python
""".split())

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]+")


def query_terms(*texts: str, min_length: int = 3) -> list[str]:
    """Distinct lowercase terms of the topic, stopwords removed, longest first."""
    terms = {t.lower() for text in texts for t in _TOKEN.findall(text or "")}
    terms = {t for t in terms if len(t) >= min_length and t not in STOPWORDS}
    return sorted(terms, key=lambda t: (-len(t), t))


def _stem(term: str) -> str:
    """A light suffix strip so that "compressed" also marks "compression"."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "es", "ed", "s"):
        if term.endswith(suffix) and len(term) - len(suffix) >= 4:
            return term[: -len(suffix)]
    return term


def highlight(text: str, terms: list[str]) -> str:
    """HTML-escaped ``text`` with every word that starts with a (stemmed) term wrapped in <mark>.

    Matching runs on the raw text and each piece is escaped on its own, so a mark never lands
    inside an HTML entity.
    """
    text = text or ""
    stems = sorted({_stem(t) for t in terms}, key=len, reverse=True)
    if not stems:
        return html.escape(text)
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(s) for s in stems) + r")\w*", re.IGNORECASE)
    pieces, last = [], 0
    for match in pattern.finditer(text):
        pieces.append(html.escape(text[last:match.start()]))
        pieces.append(f"<mark>{html.escape(match.group(0))}</mark>")
        last = match.end()
    pieces.append(html.escape(text[last:]))
    return "".join(pieces)
