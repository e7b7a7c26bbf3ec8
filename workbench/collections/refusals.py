"""What an import says when its input cannot be imported (one line per problem). Kept apart from
``workbench.collections.services`` so that every import's module (``workbench.collections.run_imports`` too) can raise it."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["ImportRefused"]


class ImportRefused(Exception):
    """Input that cannot be imported; ``problems`` holds one line per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        more = f" (and {len(self.problems) - 1} more problems)" if len(self.problems) > 1 else ""
        super().__init__(f"{self.problems[0]}{more}")
