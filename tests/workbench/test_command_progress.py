"""Every command that runs a job's work says how far it is the same way (workbench.management.progress): on a pipe a
line each time another tenth is done, then its closing line; on a terminal a bar on standard error and no such
lines."""

from __future__ import annotations

import io
from io import StringIO

from django.core.management import call_command

from tests import factories


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _runs(tmp_path, count: int) -> list[str]:
    paths = []
    for i in range(count):
        path = tmp_path / f"r{i}.run"
        path.write_text(factories.run_lines(f"r{i}", {"301": ["a", "b"], "302": ["c"]}))
        paths.append(str(path))
    return paths


def test_import_runs_on_a_pipe_prints_a_line_per_tenth_then_what_it_did(db, tmp_path):
    factories.collection_with_topics()
    out = StringIO()
    call_command("import_runs", "robust", *_runs(tmp_path, 5), stdout=out, stderr=StringIO())
    lines = out.getvalue().splitlines()
    progress = [line for line in lines if line.split("% ")[0].isdigit()]
    assert [int(line.split("%")[0]) for line in progress] == list(range(10, 101, 10))  # 10 steps: 5 checked, 5 stored
    assert progress[-1] == "100% runs (check, then store): 10 of 10 files"
    assert lines[-1] == "imported 5 runs into 'robust'"


def test_on_a_terminal_the_progress_is_a_bar_and_the_output_keeps_only_what_it_did(db, tmp_path):
    factories.collection_with_topics()
    out, err = Terminal(), StringIO()
    call_command("import_runs", "robust", *_runs(tmp_path, 2), stdout=out, stderr=err)
    assert not [line for line in out.getvalue().splitlines() if line.split("% ")[0].isdigit()]
    assert out.getvalue().splitlines()[-1] == "imported 2 runs into 'robust'"
