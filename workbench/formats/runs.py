"""TREC run files: ``qid Q0 docno rank score tag``, read and validated like NIST's submission checkers.

Fields are separated by any whitespace; blank lines are skipped. The second column is ignored. Comment
lines (``#``) before the first run line are its metadata header (ir_metadata; :mod:`run_metadata`).
Errors (all reported, up to ``max_problems``, each ``path:LINE: message``): wrong column count, a rank
that is not an integer, a score that is not a finite number, the same docno twice in a topic, a topic
not in ``known_qids``, more than ``max_depth`` lines for a topic, more than one run tag, no lines.
Warnings (the run is still read) are listed in :mod:`workbench.formats.run_warnings`.

The frame: ``qid`` is a pandas ``Categorical`` of ``str`` whose categories are sorted like ``strcmp``
(so sorting by qid sorts by the strings), ``docno`` is pandas' ``str`` dtype, ``rank`` int64, ``score``
float64; rows in file order with a RangeIndex.

:func:`workbench.formats.run_arrays.read_run_arrays` is the evaluation engine's reader: trec_eval's
rules and the same checks and messages, as arrays, without pandas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from workbench.formats import checks, identifiers
from workbench.formats.columns import Column, LineMap, read_columns
from workbench.formats.errors import Problems
from workbench.formats.run_metadata import split_header
from workbench.formats.run_warnings import run_warnings
from workbench.formats.sources import Source, display_name, is_path, read_buffer

if TYPE_CHECKING:  # pandas is imported only where a frame is built
    import pandas as pd

RUN_COLUMNS = (Column("qid", pa.string()), Column("q0", pa.string(), keep=False), Column("docno", pa.string()),
               Column("rank", pa.int64()), Column("score", pa.float64()), Column("tag", pa.string()))


@dataclass(frozen=True)
class RunFile:
    """One run file: its single tag, its lines as a frame (file order), and the checker's warnings."""

    tag: str
    frame: pd.DataFrame
    warnings: tuple[str, ...]
    name: str
    #: the file's metadata header (ir_metadata's YAML as ``{"ir_metadata": {...}}``), None without one
    metadata: dict | None = None


def _describe(column: str, raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    if column == "rank":
        return f"rank {text!r} is not an integer"
    return f"score {text!r} is not a number"


def read_run(source: Source, *, name: str | None = None, max_depth: int | None = 1000,
             known_qids: set[str] | None = None, max_problems: int = 20,
             check_warnings: bool = True, trec_eval_rules: bool = False) -> RunFile:
    """Read and validate a TREC run; raise :class:`FormatError` listing every problem found.

    ``max_depth=None`` accepts any number of lines per topic; ``known_qids=None`` accepts any topic;
    ``check_warnings=False`` skips the (sorting) checks that only warn.

    ``trec_eval_rules=True`` accepts what trec_eval 9.0.8 accepts (``get_trec_results.c``) where the
    submission checker would not: fields after the tag are ignored (its ``results.trunc`` test file
    has them), and the tag may change from line to line (``tag`` is then the last line's, as trec_eval
    reports). Everything else is still checked: column count, integer rank, finite score, duplicates.

    >>> import io
    >>> run = read_run(io.StringIO("301 Q0 D1 1 2.5 mine\\n301\\tQ0\\tD2\\t2\\t1.5\\tmine\\n"))
    >>> run.tag, run.frame["docno"].tolist(), run.frame["score"].tolist()
    ('mine', ['D1', 'D2'], [2.5, 1.5])
    """
    import pandas as pd

    name = display_name(source, name)
    problems = Problems(name, max_problems)
    data, metadata = split_header(read_buffer(source, kind="runs"), problems)
    table, lines = read_columns(data, RUN_COLUMNS, problems, _describe, extra_fields=trec_eval_rules,
                                path=source if is_path(source) and metadata is None else None)
    qcodes, qids = checks.sorted_categories(table.column("qid"))
    score = table.column("score").to_numpy()
    rank = table.column("rank").to_numpy()
    docno = table.column("docno")
    _check_empty(table, problems)
    for kind in ("qid", "docno", "tag"):
        identifiers.check_column(kind, table.column(kind), lines, problems)
    _check_scores(score, lines, problems)
    if trec_eval_rules:
        tags = [table.column("tag")[-1].as_py()] if table.num_rows else []
    else:
        tags = _check_tags(table.column("tag"), lines, problems)
    _check_topics(qcodes, qids, lines, problems, max_depth, known_qids)
    _check_duplicates(qcodes, qids, docno, lines, problems)
    problems.raise_if_any()
    warnings = tuple(run_warnings(name, qcodes, qids, docno, rank, score, lines)) if check_warnings else ()
    frame = pd.DataFrame({
        "qid": checks.categorical(qcodes, qids),
        "docno": docno.to_pandas(),
        "rank": rank,
        "score": score,
    })
    return RunFile(tag=tags[0], frame=frame, warnings=warnings, name=name, metadata=metadata)


def _check_empty(table: pa.Table, problems: Problems) -> None:
    if table.num_rows == 0 and not problems:
        problems.add(1, "the file is empty: no run lines")


def _check_scores(score: np.ndarray, lines: LineMap, problems: Problems) -> None:
    bad = np.flatnonzero(~np.isfinite(score))
    if bad.size:
        shown = bad[: problems.cap]
        problems.add_many(((int(line), f"score {float(score[row])!r} is not a finite number")
                           for row, line in zip(shown, lines(shown), strict=True)), bad.size)


def _check_tags(column: pa.ChunkedArray, lines: LineMap, problems: Problems) -> list[str]:
    """The run tags of the file, the first one first; every other tag is a problem at its first line."""
    if len(column) == 0:
        return []
    main = column[0].as_py()
    if pc.all(pc.equal(column, main)).as_py():
        return [main]
    codes, tags = checks.sorted_categories(column)
    first = checks.first_rows(codes, np.arange(len(tags)), len(tags))
    order = np.argsort(first, kind="stable")
    main_line = lines.line(int(first[order[0]]))
    problems.add_many(((lines.line(int(first[k])), f"run tag {tags[k]!r} differs from {main!r} "
                        f"(line {main_line}): a file holds exactly one run") for k in order[1:]),
                      len(tags) - 1)
    return [tags[k] for k in order]


def _check_topics(codes: np.ndarray, qids: list[str], lines: LineMap, problems: Problems,
                  max_depth: int | None, known_qids: set[str] | None) -> None:
    if known_qids is not None:
        unknown = np.array([k for k, qid in enumerate(qids) if qid not in known_qids], dtype=np.int64)
        if unknown.size:
            rows = checks.first_rows(codes, unknown, len(qids))
            problems.add_many(((lines.line(int(row)), f"topic {qids[k]!r} is not a topic of the collection")
                               for k, row in zip(unknown, rows, strict=True)), unknown.size)
    if max_depth is None:
        return
    counts = np.bincount(codes, minlength=len(qids))
    over = np.flatnonzero(counts > max_depth)
    if over.size:
        order = np.argsort(codes, kind="stable")
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        rows = order[starts[over] + max_depth]
        problems.add_many(((lines.line(int(row)), f"topic {qids[k]!r} has {counts[k]} lines, more than the "
                            f"maximum depth {max_depth}") for k, row in zip(over, rows, strict=True)),
                          over.size)


def _check_duplicates(codes: np.ndarray, qids: list[str], docno: pa.ChunkedArray | pa.Array, lines: LineMap,
                      problems: Problems, hashes: np.ndarray | None = None) -> None:
    later, first = checks.duplicate_rows(codes, len(qids), docno, hashes)
    if later.size:
        shown = np.argsort(later, kind="stable")[: problems.cap]
        names = docno.take(pa.array(later[shown])).to_pylist()
        problems.add_many(((lines.line(int(later[i])), f"document {doc!r} appears more than once in topic "
                            f"{qids[codes[later[i]]]!r} (first at line {lines.line(int(first[i]))})")
                           for i, doc in zip(shown, names, strict=True)), later.size)


def write_run(frame: pd.DataFrame, tag: str, dest: Source) -> None:
    """Write ``frame`` (``qid``, ``docno``, ``score``, optional ``rank``) as a TREC run, in frame order.

    Without a ``rank`` column the rank is the position within the topic in frame order (1, 2, ...).
    Scores are written in their shortest round-trip form, so :func:`read_run` gives them back exactly.
    """
    from workbench.formats.writers import write_columns

    if not tag or any(ch in "\t\n\v\f\r " for ch in tag):
        raise ValueError(f"run tag {tag!r} must be non-empty and contain no whitespace")
    if "rank" in frame.columns:
        rank = frame["rank"].to_numpy(np.int64)
    else:
        rank = frame.groupby(frame["qid"].astype(str), sort=False).cumcount().to_numpy(np.int64) + 1
    write_columns({"qid": frame["qid"], "q0": "Q0", "docno": frame["docno"], "rank": rank,
                   "score": frame["score"].to_numpy(np.float64), "tag": tag}, len(frame), dest)
