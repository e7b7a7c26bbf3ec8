"""Reading a chat model's list out of its reply: the last bracketed list in the text (a JSON array or a Python
literal, as nuggetizer's prompts ask for), with or without a code fence around it. Django-free.

>>> listed('Labels: ["support", "not_support"]')
['support', 'not_support']
>>> listed("```python\\n[{'text': 'Paris is the capital', 'importance': 'vital'}]\\n```")
[{'text': 'Paris is the capital', 'importance': 'vital'}]
>>> listed("I cannot help")
Traceback (most recent call last):
...
ValueError: the reply has no list in brackets [...]
"""

from __future__ import annotations

import ast
import json

__all__ = ["listed"]


def listed(content: str) -> list:
    """The list a reply gives; ValueError saying why when it gives none that can be read."""
    text = content or ""
    end = text.rfind("]")
    start = text.find("[")
    if start < 0 or end < start:
        raise ValueError("the reply has no list in brackets [...]")
    while start >= 0 and start < end:
        piece = text[start:end + 1]
        for read in (json.loads, ast.literal_eval):
            try:
                value = read(piece)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, list):
                return value
        start = text.find("[", start + 1)
    raise ValueError("the reply's list in brackets is neither JSON nor a Python literal")
