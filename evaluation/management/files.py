"""What the file-only evaluation commands (compare, curves, diversity, xinfap) share."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from evaluation.engine.spec import MeasureError
from workbench.formats import FormatError
from workbench.management.errors import Error  # not .base: these commands run before Django starts


@contextlib.contextmanager
def one_line_errors() -> Iterator[None]:
    """Bad input (a malformed line, a wrong measure, a file that cannot be read) as one line, no traceback."""
    try:
        yield
    except (MeasureError, FormatError, ValueError) as exc:
        raise Error(str(exc).splitlines()[0]) from None
    except OSError as exc:
        raise Error(f"{exc.filename}: cannot read: {exc.strerror}") from None
