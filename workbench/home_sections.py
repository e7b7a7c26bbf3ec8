"""Task sections of a user's home page, each contributed by the app that owns the tasks: an app's ``home``
module declares ``HOME_SECTIONS``, functions ``user -> list of TaskLink`` (label, url, count), and the home
page and the assessor's queue show every link they give. This lets an app above judging (answers) put its
tasks on pages that sit below it, with no upward import: :func:`autodiscover` imports every project app's
``home`` module once, when a page first shows the sections, as :mod:`workbench.jobs.kinds` does for ``tasks``.
Judging's own document queue stays the queue page itself, not a section.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from workbench.app_modules import app_modules

__all__ = ["SECTIONS", "TaskLink", "autodiscover", "links_for"]


@dataclass(frozen=True)
class TaskLink:
    """One line of a home page's task list: ``label`` links to ``url``; ``count`` of ``unit`` (``3 topics``)
    when it has one (None: a page, not a count of work)."""

    label: str
    url: str
    count: int | None = None
    unit: str = ""

    @property
    def count_text(self) -> str:
        if self.count is None:
            return ""
        return f"{self.count:,} {self.unit}{'s' if self.unit and self.count != 1 else ''}".strip()


#: every app's section functions, in the apps' order then their declared order
SECTIONS: list[Callable[..., list[TaskLink]]] = []


def autodiscover() -> list[str]:
    """Import every project app's ``home`` module and register its ``HOME_SECTIONS``; the apps that declared
    some. Calling it again changes nothing."""
    found = []
    for app, module in app_modules("home"):
        declared = getattr(module, "HOME_SECTIONS", ())
        SECTIONS.extend(s for s in declared if s not in SECTIONS)
        if declared:
            found.append(app)
    return found


#: autodiscover(), run the first time it is asked for only
_discovered = functools.cache(autodiscover)


def _discover() -> list[Callable[..., list[TaskLink]]]:
    """The registered functions, every app's module imported the first time only (not at start-up)."""
    _discovered()
    return SECTIONS


def links_for(user) -> list[TaskLink]:
    """Every section's links for ``user`` (nothing for someone not logged in)."""
    if not getattr(user, "is_authenticated", False):
        return []
    return [link for section in _discover() for link in section(user)]
