"""The one error every management command raises for bad input, importable without Django's app registry (the
commands manage.py runs before Django starts use it too; :mod:`workbench.management.base` re-exports it)."""

from __future__ import annotations

from django.core.management.base import CommandError


class Error(CommandError):
    """Django prints a CommandError as "ClassName: message", so this reads "Error: path:3: ..."."""
