"""Files an app above evaluation adds to the release bundle (:func:`evaluation.release.release_bundle`).

An app's ``release_files`` module declares ``RELEASE_FILES``: functions ``(collection, policy) -> list of
ReleaseFile`` (an empty list when the collection has nothing of theirs). The bundle holds every file they give
and its README describes each with the file's ``about``. This lets answers put its nuggets, assignments and
scores in the zip that evaluation builds, with no upward import: :func:`autodiscover` imports every project
app's ``release_files`` module once, when a bundle is first built, as :mod:`workbench.home_sections` does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from workbench.app_modules import app_modules

__all__ = ["CONTRIBUTORS", "ReleaseFile", "autodiscover", "files_for", "readme_lines", "texts"]


@dataclass(frozen=True)
class ReleaseFile:
    """One file of the bundle: its ``name`` in the zip, its ``text``, and the README's line about it."""

    name: str
    text: str
    about: str


#: every app's contributing functions, in the apps' order then their declared order
CONTRIBUTORS: list[Callable[..., list[ReleaseFile]]] = []


def autodiscover() -> list[str]:
    """Import every project app's ``release_files`` module and register its ``RELEASE_FILES``; the apps that
    declared some. Calling it again changes nothing."""
    found = []
    for app, module in app_modules("release_files"):
        declared = getattr(module, "RELEASE_FILES", ())
        CONTRIBUTORS.extend(c for c in declared if c not in CONTRIBUTORS)
        if declared:
            found.append(app)
    return found


#: autodiscover(), run the first time it is asked for only
_discovered = functools.cache(autodiscover)


def _discover() -> list[Callable[..., list[ReleaseFile]]]:
    """The registered functions, every app's module imported the first time only (not at start-up)."""
    _discovered()
    return CONTRIBUTORS


def files_for(collection, policy: str) -> list[ReleaseFile]:
    """Every contributed file of ``collection``'s bundle, in the contributors' order."""
    return [part for contributor in _discover() for part in contributor(collection, policy)]


def texts(parts: list[ReleaseFile]) -> dict[str, str]:
    """The files by name, as the bundle writes them."""
    return {part.name: part.text for part in parts}


def readme_lines(parts: list[ReleaseFile]) -> list[str]:
    """The README's lines about the files (its list of files)."""
    return [f"- `{part.name}`: {part.about}" for part in parts]
