"""TREC qrels: ``qid iter docno rel``, any whitespace, the ``iter`` column ignored.

Real files carry ``0``, ``Q0`` or a judging round such as ``1.5`` in the second column. Grades are
integers, negatives allowed (trec_eval reads ``-1`` as "pooled but not judged").

Duplicates: a (qid, docno) pair judged twice is an error here. trec_eval 9.0.8 reads the file
(``get_qrels.c``), sorts the judgments by qid then docno, and when it evaluates that topic
``form_res_rels.c`` stops with ``trec_eval.form_res_rels: duplicate docs DOCNO``: it neither keeps
the first nor the last grade. Refusing the file up front, naming both lines, is the same outcome
with a better message.

The frame: ``qid`` is a pandas ``Categorical`` of ``str`` with categories sorted like ``strcmp``,
``docno`` pandas' ``str`` dtype, ``rel`` int64; file order, RangeIndex.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from workbench.formats import checks, identifiers
from workbench.formats.columns import Column, read_columns
from workbench.formats.errors import FormatError, Problems
from workbench.formats.sources import Source, display_name, is_path, read_buffer

if TYPE_CHECKING:  # pandas is imported only where a frame is built
    import pandas as pd

QRELS_COLUMNS = (Column("qid", pa.string()), Column("iter", pa.string(), keep=False), Column("docno", pa.string()),
                 Column("rel", pa.int64()))


def _describe(column: str, raw: bytes) -> str:
    return f"grade {raw.decode('utf-8', 'replace')!r} is not an integer"


def read_qrels(source: Source, *, name: str | None = None, max_problems: int = 20) -> pd.DataFrame:
    """Read a qrels file; raise :class:`FormatError` (every problem, ``path:LINE: ...``) on bad input.

    >>> import io
    >>> read_qrels(io.StringIO("301 0 D1 2\\n301\\tQ0\\tD2\\t-1\\n")).to_dict("list")
    {'qid': ['301', '301'], 'docno': ['D1', 'D2'], 'rel': [2, -1]}
    """
    import pandas as pd

    table, codes, qids, _ = _read(source, name, max_problems, check_identifiers=True)
    return pd.DataFrame({
        "qid": checks.categorical(codes, qids),
        "docno": table.column("docno").to_pandas(),
        "rel": table.column("rel").to_numpy(),
    })


GRADES = ("integer", "truncate", "fractional")


def read_qrels_table(source: Source, *, name: str | None = None, max_problems: int = 20,
                     grades: str = "integer", notes: list[str] | None = None) -> pa.Table:
    """:func:`read_qrels` without pandas: a pyarrow table ``qid``, ``docno`` (strings), ``rel``, file order,
    after the same checks (the evaluation engine's reader).

    ``grades``: ``"integer"`` (``rel`` int64; a grade with decimals is an error), ``"truncate"`` (as
    trec_eval's ``atol``: ``0.6`` is read as 0 and ``2.7`` as 2, and one line saying so is appended to
    ``notes``) or ``"fractional"`` (``rel`` float64, the exact values).

    >>> import io
    >>> read_qrels_table(io.StringIO("301 0 D1 2\\n")).to_pydict()
    {'qid': ['301'], 'docno': ['D1'], 'rel': [2]}
    >>> notes = []
    >>> read_qrels_table(io.StringIO("301 0 D1 0.6\\n301 0 D2 2.5\\n"), grades="truncate", notes=notes)["rel"].to_pylist()
    [0, 2]
    >>> notes[0].split(";")[0]
    "<stream>:1: grade '0.6' read as 0, as trec_eval reads grades (atol)"
    >>> read_qrels_table(io.StringIO("301 0 D1 0.6\\n"), grades="fractional")["rel"].to_pylist()
    [0.6]
    """
    if grades not in GRADES:
        raise ValueError(f"grades must be one of {', '.join(GRADES)}")
    try:
        return _read(source, name, max_problems)[0]
    except FormatError:
        if grades == "integer" or isinstance(source, io.IOBase) and not source.seekable():
            raise
    if isinstance(source, io.IOBase):
        source.seek(0)
    table, _, _, lines = _read(source, name, max_problems, rel_type=pa.string())
    return _decimal_grades(table, lines, display_name(source, name), grades, notes)


_DECIMAL = r"^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)$"


def _decimal_grades(table: pa.Table, lines, name: str, grades: str, notes: list[str] | None) -> pa.Table:
    """The ``rel`` strings of ``table`` as numbers: every one must be a plain decimal number."""
    rel = table.column("rel")
    plain = pc.match_substring_regex(rel, _DECIMAL)
    if not pc.all(plain).as_py():
        row = int(pc.index(plain, False).as_py())
        raise FormatError([f"{name}:{lines.line(row)}: grade {rel[row].as_py()!r} is not a number"])
    values = pc.cast(rel, pa.float64())
    if grades == "fractional":
        return table.set_column(table.schema.get_field_index("rel"), "rel", values)
    whole = pc.cast(pc.trunc(values), pa.int64())
    changed = pc.not_equal(pc.cast(whole, pa.float64()), values)
    if notes is not None and pc.any(changed).as_py():
        row = int(pc.index(changed, True).as_py())
        count = pc.sum(pc.cast(changed, pa.int64())).as_py()
        notes.append(f"{name}:{lines.line(row)}: grade {rel[row].as_py()!r} read as {whole[row].as_py()}, as trec_eval "
                     f"reads grades (atol); {count} grade{'s' if count != 1 else ''} had decimals. "
                     "--fractional-grades uses the exact values")
    return table.set_column(table.schema.get_field_index("rel"), "rel", whole)


def _read(source: Source, name: str | None, max_problems: int, check_identifiers: bool = False,
          rel_type: pa.DataType | None = None) -> tuple[pa.Table, np.ndarray, list[str], object]:
    """The checked table, with the qid codes and sorted qids that the checks computed. ``check_identifiers``
    applies the workbench's identifier rules (the ``trec_eval`` drop-in accepts what trec_eval accepts)."""
    name = display_name(source, name)
    problems = Problems(name, max_problems)
    columns = QRELS_COLUMNS if rel_type is None else (*QRELS_COLUMNS[:3], Column("rel", rel_type))
    table, lines = read_columns(read_buffer(source, kind="qrels"), columns, problems, _describe,
                                path=source if is_path(source) else None)
    codes, qids = checks.sorted_categories(table.column("qid"))
    docno = table.column("docno")
    if table.num_rows == 0 and not problems:
        problems.add(1, "the file is empty: no judgments")
    if check_identifiers:
        identifiers.check_column("qid", table.column("qid"), lines, problems)
        identifiers.check_column("docno", docno, lines, problems)
    later, first = checks.duplicate_rows(codes, len(qids), docno)
    if later.size:
        shown = np.argsort(later, kind="stable")[: problems.cap]
        names = docno.take(pa.array(later[shown])).to_pylist()
        problems.add_many(((lines.line(int(later[i])), f"document {doc!r} is judged more than once for topic "
                            f"{qids[codes[later[i]]]!r} (first at line {lines.line(int(first[i]))})")
                           for i, doc in zip(shown, names, strict=True)), later.size)
    problems.raise_if_any()
    return table, codes, qids, lines


def write_qrels(frame: pd.DataFrame, dest: Source) -> None:
    """Write ``frame`` (``qid``, ``docno``, ``rel``) as ``qid 0 docno rel`` lines, sorted by qid then
    docno as strings (byte order, like ``LC_ALL=C sort``); ``dest`` is a path (``.gz`` compressed) or a
    file object.
    """
    import pandas as pd

    from workbench.formats.writers import write_columns

    ordered = pd.DataFrame({"qid": frame["qid"].astype(str), "docno": frame["docno"].astype(str),
                            "rel": frame["rel"].to_numpy(np.int64)})
    ordered = ordered.sort_values(["qid", "docno"], kind="stable")
    write_columns({"qid": ordered["qid"], "iter": "0", "docno": ordered["docno"], "rel": ordered["rel"]},
                  len(ordered), dest)
