"""Every import command, fed damaged files (property-based: bytes flipped, cut, NULs and junk inserted,
lines doubled or dropped, gzip cut short), either imports the file or refuses it with lines naming the
file, and a refusal leaves nothing behind. Never a traceback. Runs on SQLite and on PostgreSQL (the suite
runs on both), so both databases accept and refuse alike. Counts go to test-artifacts/ for README.md.
"""

from __future__ import annotations

import gzip
import json
import os
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judging.models import Judgment
from tests import factories
from workbench.models import Document, Run, Topic

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"

VALID = {
    "import_topics": b"<top>\n<num> Number: 401\n<title> Coral reefs\n<desc> Description:\nReef health.\n</top>\n"
                     b"<top>\n<num> Number: 402\n<title> Tidal power\n</top>\n",
    "import_documents": b"<DOC>\n<DOCNO> d1 </DOCNO>\n<TITLE>Reefs</TITLE>\nCoral reefs bleach.\n</DOC>\n"
                        b"<DOC>\n<DOCNO> d2 </DOCNO>\nTides turn turbines.\n</DOC>\n",
    "import_runs": b"301 Q0 d1 1 2.5 mine\n301 Q0 d2 2 1.5 mine\n302 Q0 d3 1 3.0 mine\n",
    "import_qrels": b"301 0 d1 1\n301 0 d2 0\n302 0 d3 1\n",
}

_counts = {"files": 0, "imported": 0, "refused": 0, "tracebacks": 0, "partial imports": 0}


@st.composite
def damaged(draw, data: bytes) -> bytes:
    """``data`` with one to three random kinds of damage."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "cut", "nul", "junk", "double", "drop", "utf8"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
        elif kind == "cut":
            data = data[:at]
        elif kind == "nul":
            data = data[:at] + b"\x00" + data[at:]
        elif kind == "junk":
            data = data[:at] + draw(st.binary(min_size=1, max_size=12)) + data[at:]
        elif kind == "utf8":
            data = data[:at] + b"\xff\xfe\xc3" + data[at:]
        else:
            lines = data.split(b"\n")
            k = draw(st.integers(0, len(lines) - 1))
            if kind == "double":
                lines.insert(k, lines[k])
            else:
                del lines[k]
            data = b"\n".join(lines)
    return data


def _state() -> tuple[int, int, int, int]:
    return Topic.objects.count(), Document.objects.count(), Run.objects.count(), Judgment.objects.count()


def _try(command: str, slug: str, path: Path) -> None:
    _counts["files"] += 1
    before = _state()
    try:
        call_command(command, slug, str(path), stdout=StringIO(), stderr=StringIO())
    except CommandError as exc:
        _counts["refused"] += 1
        if _state() != before:
            _counts["partial imports"] += 1
        assert _state() == before, f"{command} left a partial import of {path}"
        assert str(exc) and "Traceback" not in str(exc)
    except Exception as exc:  # what a user would see as a traceback
        _counts["tracebacks"] += 1
        raise AssertionError(f"{command} {path}: {type(exc).__name__}: {exc}") from exc
    else:
        _counts["imported"] += 1


@pytest.mark.parametrize("command", sorted(VALID))
@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), compressed=st.booleans())
def test_a_damaged_file_is_imported_or_refused_whole_never_a_traceback(db, tmp_path, command, data, compressed):
    slug = "robust"
    if not Topic.objects.filter(collection__slug=slug).exists():
        factories.collection_with_topics()
    content = data.draw(damaged(VALID[command]))
    path = tmp_path / ("file.gz" if compressed else "file.txt")
    if compressed:
        packed = gzip.compress(content)
        content = packed[: data.draw(st.integers(10, len(packed)))]  # sometimes cut short
    path.write_bytes(content)
    _try(command, slug, path)


def teardown_module(module) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (ARTIFACTS / f"robustness.files.{worker}.json").write_text(json.dumps(_counts, indent=1))
