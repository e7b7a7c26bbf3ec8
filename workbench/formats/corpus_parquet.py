"""Parquet corpora used by reference: where each document is (row group, row), and the documents at such places.

A row is read by the rules of a JSONL line (:func:`document_from_mapping`: the docno from ``docno``, ``id`` or
``_id``; ``title``; the text from ``text``, ``contents`` or ``body``; other columns to ``extra``); messages
name the file and the row (1-based) as ``file.parquet:ROW``. Indexing reads the docno column only; fetching
reads each needed row group once (a document opened alone costs one row group's read).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.formats import corpus_files, identifiers
from workbench.formats.documents import _JSON_IDS, DocumentRecord, document_from_mapping
from workbench.formats.errors import FormatError

MAGIC = b"PAR1"


def is_parquet(location: str | os.PathLike) -> bool:
    with corpus_files.open_raw(location) as handle:
        return handle.read(4) == MAGIC


def _opened(handle, name: str) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(handle)
    except (pa.ArrowInvalid, OSError) as exc:
        raise FormatError([f"{name}: not a readable Parquet file ({exc})"]) from None


def scan(location, name: str, hash_of: Callable[[str], int], progress: Callable[[int], None] | None = None
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hashes, row groups, rows in their group) of every document, in file order."""
    hashes, groups, rows = [], [], []
    with corpus_files.open_raw(location) as handle:
        parquet = _opened(handle, name)
        id_column = next((c for c in _JSON_IDS if c in parquet.schema_arrow.names), None)
        if id_column is None:
            raise FormatError([f"{name}: no docno column (one of {', '.join(_JSON_IDS)})"])
        first_row = 1
        for group in range(parquet.num_row_groups):
            docnos = parquet.read_row_group(group, columns=[id_column]).column(0).to_pylist()
            group_hashes = []
            for offset, docno in enumerate(docnos):
                text = "" if docno is None else str(docno)
                problem = identifiers.identifier_problem("docno", text) if text else "document has no id"
                if problem:
                    raise FormatError([f"{name}:{first_row + offset}: {problem}"])
                group_hashes.append(hash_of(text))
            hashes.append(np.array(group_hashes, np.uint64))
            groups.append(np.full(len(docnos), group, np.uint64))
            rows.append(np.arange(len(docnos), dtype=np.uint64))
            first_row += len(docnos)
            if progress:
                progress(len(docnos))
    empty = [np.zeros(0, np.uint64)]
    return np.concatenate(hashes or empty), np.concatenate(groups or empty), np.concatenate(rows or empty)


def row_number(location, name: str, place: tuple[int, int]) -> int:
    """The 1-based row of (row group, row) in the whole file."""
    with corpus_files.open_raw(location) as handle:
        metadata = _opened(handle, name).metadata
        return sum(metadata.row_group(g).num_rows for g in range(place[0])) + place[1] + 1


def fetch(location, name: str, places: Iterable[tuple[int, int]]) -> Iterator[tuple[tuple[int, int], DocumentRecord]]:
    """((row group, row), document) of each place, each row group read once."""
    wanted: dict[int, list[int]] = defaultdict(list)
    for group, row in set(places):
        wanted[group].append(row)
    with corpus_files.open_raw(location) as handle:
        parquet = _opened(handle, name)
        before = np.cumsum([0] + [parquet.metadata.row_group(g).num_rows for g in range(parquet.num_row_groups)])
        for group in sorted(wanted):
            rows = sorted(wanted[group])
            table = parquet.read_row_group(group).take(pa.array(rows, pa.int64()))
            for row, item in zip(rows, table.to_pylist(), strict=True):
                yield (group, row), document_from_mapping(item, name, int(before[group]) + row + 1)
