"""Opening inputs: paths, gzip, text and binary file objects; and the package stays free of Django."""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
from pathlib import Path

from workbench.formats import FormatError, open_text

ROOT = Path(__file__).resolve().parents[2]


def test_open_text_reads_plain_and_gzip_paths(tmp_path):
    plain, packed = tmp_path / "a.txt", tmp_path / "a.txt.gz"
    plain.write_text("héllo\n", encoding="utf-8")
    packed.write_bytes(gzip.compress("héllo\n".encode()))
    for source in (plain, str(plain), packed, str(packed)):
        with open_text(source) as handle:
            assert handle.read() == "héllo\n"


def test_open_text_detects_gzip_content_without_the_suffix(tmp_path):
    path = tmp_path / "compressed.trec"
    path.write_bytes(gzip.compress(b"<DOC>\n"))
    with open_text(path) as handle:
        assert handle.read() == "<DOC>\n"


def test_open_text_leaves_callers_file_objects_open():
    binary, text = io.BytesIO(gzip.compress(b"x y\n")), io.StringIO("x y\n")
    for stream in (binary, text):
        with open_text(stream) as handle:
            assert handle.read() == "x y\n"
        assert not stream.closed


def test_open_text_replaces_undecodable_bytes():
    with open_text(io.BytesIO(b"caf\xe9")) as handle:
        assert handle.read() == "caf\ufffd"


def test_format_error_lists_problems_and_counts_the_rest():
    error = FormatError(["a.txt:1: first", "a.txt:2: second", "a.txt:3: third"])
    assert str(error) == "a.txt:1: first (and 2 more problems)"
    assert error.problems[1] == "a.txt:2: second"
    assert isinstance(error, ValueError)
    assert str(FormatError(["a.txt:1: only"])) == "a.txt:1: only"


def test_importing_the_formats_package_does_not_import_django():
    code = "import workbench.formats, sys; assert not any(m=='django' or m.startswith('django.') for m in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
