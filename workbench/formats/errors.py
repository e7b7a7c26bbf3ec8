"""Errors of the readers: every problem is one line ``path:LINE: what is wrong``."""

from __future__ import annotations

from collections.abc import Iterable


class FormatError(ValueError):
    """Bad input. ``problems`` lists every problem found (capped), each ``path:LINE: message``.

    ``str(exc)`` is the first problem, plus `` (and N more problems)`` when there are more;
    ``total`` counts every problem found, including those left out of ``problems`` by the cap.

    >>> str(FormatError(["run.txt:3: score 'x' is not a number", "run.txt:9: topic '7' is unknown"]))
    "run.txt:3: score 'x' is not a number (and 1 more problems)"
    """

    def __init__(self, problems: Iterable[str], total: int | None = None) -> None:
        self.problems: list[str] = list(problems) or ["invalid input"]
        self.total: int = max(total or 0, len(self.problems))
        more = self.total - 1
        super().__init__(self.problems[0] + (f" (and {more} more problems)" if more else ""))


class Problems:
    """Collects ``(line, message)`` problems of one file, keeps the first ``cap`` by line number.

    Each rule adds at most ``cap`` located problems (the earliest it knows of) and tells how many it
    found in all, so the kept ones are the first ``cap`` of the whole file.
    """

    def __init__(self, name: str, cap: int) -> None:
        self.name = name
        self.cap = max(1, cap)
        self._found: list[tuple[int, int, str]] = []
        self.total = 0

    def add(self, line: int, message: str) -> None:
        self.total += 1
        self._found.append((line, len(self._found), message))

    def add_many(self, located: Iterable[tuple[int, str]], count: int) -> None:
        """Add the located problems of one rule (at most ``cap`` used) found ``count`` times in all."""
        kept = sorted(located)[: self.cap]
        for line, message in kept:
            self._found.append((line, len(self._found), message))
        self.total += max(count, len(kept))

    def __bool__(self) -> bool:
        return self.total > 0

    def lines(self) -> list[str]:
        """The kept problems as ``path:LINE: message``, in line order."""
        return [f"{self.name}:{line}: {message}" for line, _, message in sorted(self._found)[: self.cap]]

    def error(self) -> FormatError:
        return FormatError(self.lines(), total=self.total)

    def raise_if_any(self) -> None:
        if self:
            raise self.error()
