"""An offset index of a documents file used by reference: docno -> where the document is, built once.

The file is read once by the documents reader itself (:func:`iter_numbered_documents`: the same checks
and the same ``file:line`` messages as an import) through a stream that notes where each line starts, so
each document's first line gives its byte offset; its span ends where the next document's first line
starts. The index holds three columns sorted by a 64-bit hash of the docno (blake2b): ``hash``, ``start``,
``end``, in an uncompressed Arrow file that is memory-mapped on open, so a lookup is a binary search and a
fetch reads only its documents' bytes (24 bytes a document on disk; memory flat while indexing).
A document is fetched by parsing its span with the same reader. A Parquet file
(:mod:`workbench.formats.corpus_parquet`) keeps each document's (row group, row) in ``start`` and ``end``. Two documents with one docno are refused
with both lines, like an import.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "c.jsonl").write_text('{"id": "a", "text": "alpha"}\\n{"id": "b", "text": "beta"}\\n')
>>> build_index(folder / "c.jsonl", folder / "c.idx").documents
2
>>> CorpusIndex(folder / "c.jsonl", folder / "c.idx").get_many(["b", "z"])["b"].text
'beta'
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from workbench.formats import corpus_files, corpus_parquet
from workbench.formats.documents import DocumentRecord, detect_format, iter_documents, iter_numbered_documents
from workbench.formats.errors import FormatError

VERSION = 1
_BLOCK = 1 << 20
_FLUSH = 100_000
_SCHEMA = pa.schema([("hash", pa.uint64()), ("start", pa.uint64()), ("end", pa.uint64())])


def docno_hash(docno: str) -> int:
    return int.from_bytes(hashlib.blake2b(docno.encode("utf-8", "surrogateescape"), digest_size=8).digest(), "little")


class _LineStarts(io.TextIOBase):
    """A text stream over uncompressed bytes that remembers where each line starts (byte offset), so that
    a reader's line number becomes an offset; lines before the one asked last are forgotten."""

    def __init__(self, raw) -> None:
        self.raw = raw
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self.position = 0  # bytes read
        self.chunks: list[tuple[int, np.ndarray]] = [(1, np.zeros(1, np.uint64))]  # (first line, starts)
        self.next_line = 2

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        """The next block of text; "" only at the end (a block that ends inside a character keeps its start)."""
        while True:
            data = self.raw.read(_BLOCK)
            if data:
                starts = np.flatnonzero(np.frombuffer(data, np.uint8) == 10).astype(np.uint64) + np.uint64(self.position + 1)
                self.chunks.append((self.next_line, starts))
                self.next_line += len(starts)
                self.position += len(data)
            text = self.decoder.decode(data, final=not data)
            if text or not data:
                return text

    def offset_of(self, line: int) -> int:
        """Where ``line`` starts; the lines before it are forgotten."""
        while len(self.chunks) > 1 and self.chunks[1][0] <= line:
            self.chunks.pop(0)
        first, starts = self.chunks[0]
        return int(starts[line - first])


@dataclass(frozen=True)
class IndexSummary:
    documents: int
    format: str
    bytes: int


def _detect(location, format: str | None) -> str:
    if format:
        return format
    if corpus_parquet.is_parquet(location):
        return "parquet"
    with corpus_files.open_bytes(location) as handle:
        head = handle.read(_BLOCK).decode("utf-8", "surrogateescape").removeprefix("\ufeff")
    return detect_format(head)


def _scan(location, name: str, format: str, progress: Callable[[int], None] | None):
    """(hashes, starts, bytes read) of every document, in file order."""
    hashes: list[np.ndarray] = []
    starts: list[np.ndarray] = []
    batch_h: list[int] = []
    batch_s: list[int] = []

    def flush() -> None:
        hashes.append(np.array(batch_h, np.uint64))
        starts.append(np.array(batch_s, np.uint64))
        if progress:
            progress(len(batch_h))
        batch_h.clear()
        batch_s.clear()

    with corpus_files.open_bytes(location) as raw:
        stream = _LineStarts(raw)
        for line, record in iter_numbered_documents(stream, name=name, format=format, check_duplicates=False):
            batch_h.append(docno_hash(record.docno))
            batch_s.append(stream.offset_of(line))
            if len(batch_h) >= _FLUSH:
                flush()
        flush()
        return np.concatenate(hashes), np.concatenate(starts), stream.position


def _ends(starts: np.ndarray, total: int) -> np.ndarray:
    """Each document's span ends where the next document's first line starts (two documents on one line
    share a span: fetching parses it and picks the docno)."""
    following = np.searchsorted(starts, starts, side="right")
    return np.append(starts, np.uint64(total))[following]


def build_index(location: str | os.PathLike, index_path: str | os.PathLike, *, name: str | None = None,
                format: str | None = None, progress: Callable[[int], None] | None = None) -> IndexSummary:
    """Read the documents file at ``location`` once and write its offset index to ``index_path``.

    Raises :class:`FormatError` (``file:line: what``) for any document an import would refuse, for a docno
    seen twice, and for a file without documents."""
    name = name or str(location)
    chosen = _detect(location, format)
    identity = corpus_files.identity(location)
    if chosen == "parquet":  # a document's place: (row group, row) in the two columns
        hashes, starts, ends = corpus_parquet.scan(location, name, docno_hash, progress)
        total = len(hashes)
    else:
        hashes, starts, total = _scan(location, name, chosen, progress)
        ends = _ends(starts, total)
    if not len(hashes):
        raise FormatError([f"{name}:1: no documents found (read as {chosen})"])
    order = np.argsort(hashes, kind="stable")
    hashes = hashes[order]  # one column at a time: memory stays about five columns of 8 bytes a document
    starts = starts[order]
    ends = ends[order]
    del order
    metadata = {"version": VERSION, "format": chosen, "documents": int(len(hashes)), **identity}
    table = pa.table([hashes, starts, ends], schema=_SCHEMA.with_metadata({"corpus": json.dumps(metadata)}))
    index = CorpusIndex.__new__(CorpusIndex)
    index._open(location, table, name)
    index.refuse_duplicates()
    del index
    tmp = f"{os.fspath(index_path)}.tmp"
    with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=len(hashes))
    os.replace(tmp, index_path)
    return IndexSummary(documents=int(len(hashes)), format=chosen, bytes=total)


def _column(table: pa.Table, name: str) -> np.ndarray:
    """A column as numpy: a view of the memory-mapped file (the index is written as one chunk), so opening an
    index costs the same whatever the corpus's size."""
    column = table.column(name)
    if column.num_chunks == 1:
        return column.chunk(0).to_numpy(zero_copy_only=True)
    return column.combine_chunks().to_numpy(zero_copy_only=False)


class CorpusIndex:
    """Documents of an indexed file by docno (see the module docstring)."""

    def __init__(self, location: str | os.PathLike, index_path: str | os.PathLike, *, name: str | None = None) -> None:
        try:
            source = pa.memory_map(os.fspath(index_path), "r")
            table = pa.ipc.open_file(source).read_all()
        except (OSError, pa.ArrowInvalid) as exc:
            raise FormatError([f"{name or location}: its index cannot be read ({exc}); index the corpus again"]) from None
        self._open(location, table, name or str(location))
        if corpus_files.identity(location) != {k: self.metadata[k] for k in ("size", "mtime_ns")}:
            raise FormatError([f"{self.name}: the file changed since it was indexed; index the corpus again"])

    def _open(self, location, table: pa.Table, name: str) -> None:
        self.location, self.name = location, name
        self.metadata = json.loads(table.schema.metadata[b"corpus"])
        self.format = self.metadata["format"]
        self.hashes, self.starts, self.ends = (_column(table, n) for n in ("hash", "start", "end"))

    def __len__(self) -> int:
        return len(self.hashes)

    def _spans(self, docnos: Iterable[str]) -> set[tuple[int, int]]:
        wanted = np.array([docno_hash(d) for d in docnos], np.uint64)
        left = np.searchsorted(self.hashes, wanted, side="left")
        right = np.searchsorted(self.hashes, wanted, side="right")
        spans = set()
        for a, b in zip(left.tolist(), right.tolist(), strict=True):
            spans.update(zip(self.starts[a:b].tolist(), self.ends[a:b].tolist(), strict=True))
        return spans

    def _parse(self, data: bytes) -> list[DocumentRecord]:
        text = io.StringIO(data.decode("utf-8", "surrogateescape"))
        return list(iter_documents(text, name=self.name, format=self.format, check_duplicates=False))

    def _records(self, spans: Iterable[tuple[int, int]]) -> Iterator[tuple[tuple[int, int], list[DocumentRecord]]]:
        """(span, its documents) of each span, read in file order."""
        if self.format == "parquet":
            for place, record in corpus_parquet.fetch(self.location, self.name, spans):
                yield place, [record]
            return
        for start, end, data in corpus_files.read_spans(self.location, spans):
            yield (start, end), self._parse(data)

    def get_many(self, docnos: Iterable[str]) -> dict[str, DocumentRecord]:
        """The documents of ``docnos`` that the file holds (a docno it does not hold is left out)."""
        wanted = set(docnos)
        found: dict[str, DocumentRecord] = {}
        for _span, records in self._records(self._spans(wanted)):
            for record in records:
                if record.docno in wanted:
                    found.setdefault(record.docno, record)
        return found

    def refuse_duplicates(self) -> None:
        """A docno held by two documents is refused, naming both lines."""
        same = np.flatnonzero(self.hashes[1:] == self.hashes[:-1])
        for i in same.tolist():
            spans = [(int(self.starts[j]), int(self.ends[j])) for j in (i, i + 1)]
            docnos = [[r.docno for r in records] for _span, records in self._records(spans)]
            common = sorted(set(docnos[0]) & set(docnos[-1])) if len(docnos) == 2 else []
            if common:
                first, second = sorted(spans)
                noun = "row" if self.format == "parquet" else "line"
                raise FormatError([f"{self.name}:{self._line_at(second)}: document {common[0]!r} appears more "
                                   f"than once (first at {noun} {self._line_at(first)})"])

    def _line_at(self, span: tuple[int, int]) -> int:
        if self.format == "parquet":
            return corpus_parquet.row_number(self.location, self.name, span)
        offset = span[0]
        lines = 1
        with corpus_files.open_bytes(self.location) as handle:
            while offset > 0:
                data = handle.read(min(_BLOCK, offset))
                if not data:
                    break
                lines += data.count(b"\n")
                offset -= len(data)
        return lines
