"""Shared behaviour of the workbench's management commands: one clear line per problem on
standard error, a non-zero exit, no traceback; progress as a bar on a terminal, else a line every tenth."""

from __future__ import annotations

from contextlib import contextmanager

from django.core.checks.registry import registry
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand
from django.db import InterfaceError, OperationalError, connection

from workbench.collections.refusals import ImportRefused
from workbench.formats import FormatError
from workbench.management.errors import Error
from workbench.management.progress import Shown
from workbench.models import Collection

__all__ = ["Error", "WorkbenchCommand"]


#: the system checks of what serves pages, which a command does not: the URLconf's (they import it, and with it
#: every page's view and the HTTP API), the templates' and the admin site's (they start the template engine,
#: which imports every template tag library)
PAGE_CHECKS = {"urls", "templates", "admin"}


@contextmanager
def _without_page_checks():
    """Django's system checks but :data:`PAGE_CHECKS`; ``manage.py check``, ``runserver`` and the tests run them."""
    dropped = {check for check in registry.registered_checks if PAGE_CHECKS & set(getattr(check, "tags", ()))}
    registry.registered_checks -= dropped
    try:
        yield
    finally:
        registry.registered_checks |= dropped


class WorkbenchCommand(BaseCommand):
    max_problems_shown = 50

    def check(self, *args, **kwargs):
        """Every system check but those of what serves pages (:data:`PAGE_CHECKS`)."""
        with _without_page_checks():
            return super().check(*args, **kwargs)

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except ImportRefused as exc:
            if len(exc.problems) == 1:
                raise Error(exc.problems[0]) from None
            shown = exc.problems[: self.max_problems_shown]
            for line in shown:
                self.stderr.write(f"Error: {line}")
            if len(exc.problems) > len(shown):
                self.stderr.write(f"Error: ... and {len(exc.problems) - len(shown)} more")
            raise Error(f"{len(exc.problems)} problems; nothing was imported") from None
        except ValidationError as exc:
            raise Error("; ".join(exc.messages)) from None
        except FormatError as exc:
            raise Error(str(exc)) from None
        except MemoryError:
            raise Error("out of memory: the machine cannot hold what this file needs; nothing was imported "
                        "(split the file, or run on a machine with more memory)") from None
        except (OperationalError, InterfaceError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise Error(f"cannot use the database ({connection.settings_dict.get('NAME')}): {reason}") from None

    @staticmethod
    def get_collection(slug: str) -> Collection:
        try:
            return Collection.objects.get(slug=slug)
        except Collection.DoesNotExist:
            raise Error(f"no collection {slug!r} (create it with create_collection)") from None

    def progress(self, total: int | None, unit: str, desc: str) -> Shown:
        """How far the command is (:class:`workbench.management.progress.Shown`): a bar on a terminal, else a line
        every tenth of ``total`` (``update(n)`` adds n units done; ``report(line, done, total)`` says it in words)."""
        return Shown(self, total, unit, desc)
