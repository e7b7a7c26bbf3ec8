"""Vectorised helpers for validating columns: topic codes, first rows, duplicate (topic, document) pairs.

Duplicates are found without building a Python string per row: each docno gets a 64-bit hash computed
with numpy over the arrow string buffers, 8 bytes at a time (:func:`string_hashes`), combined with the
topic code, sorted once. Equal keys are only candidates: they are confirmed on the real strings, so a
hash collision can cost time but never report a false duplicate.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from workbench.formats.arrays import from_numpy, to_numpy

_MIX = np.uint64(0xBF58476D1CE4E5B9)
_LEN = np.uint64(0x9E3779B97F4A7C15)


def sorted_categories(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[str]]:
    """Codes (int32) and categories of a string column, the categories sorted like ``strcmp``.

    Sorting the categories makes a pandas sort on the categorical column sort by the strings.

    >>> codes, categories = sorted_categories(pa.chunked_array([["9", "10"], ["9"]]))
    >>> codes.tolist(), categories
    ([1, 0, 1], ['10', '9'])
    """
    if isinstance(column, pa.ChunkedArray) and pa.types.is_dictionary(column.type):
        return _dictionary_categories(column)
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if not pa.types.is_dictionary(column.type) and len(column) > 1:
        change = pc.indices_nonzero(pc.not_equal(column.slice(1), column.slice(0, len(column) - 1)))
        starts = np.concatenate(([0], to_numpy(change).astype(np.int64) + 1))
        if starts.size * 4 < len(column):  # long runs of one value (a run file's topics): encode the runs
            codes, categories = sorted_categories(column.take(from_numpy(starts)))
            return np.repeat(codes, np.diff(np.append(starts, len(column)))), categories
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    values = column.dictionary.to_pylist()
    order = sorted(range(len(values)), key=values.__getitem__)
    remap = np.empty(len(values), dtype=np.int32)
    remap[order] = np.arange(len(values), dtype=np.int32)
    indices = to_numpy(column.indices).astype(np.int32, copy=False)
    return remap[indices], [values[i] for i in order]


def _dictionary_categories(column: pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """:func:`sorted_categories` of dictionary-encoded chunks (each its own dictionary): only the small
    dictionaries are looked at in Python; the indices are remapped with numpy."""
    dictionaries = [chunk.dictionary.to_pylist() for chunk in column.chunks]
    categories = sorted({value for dictionary in dictionaries for value in dictionary})
    position = {value: code for code, value in enumerate(categories)}
    codes = np.empty(len(column), dtype=np.int32)
    start = 0
    for chunk, dictionary in zip(column.chunks, dictionaries, strict=True):
        remap = np.array([position[value] for value in dictionary], dtype=np.int32)
        indices = to_numpy(chunk.indices)
        codes[start: start + len(chunk)] = remap[indices] if remap.size else 0
        start += len(chunk)
    return codes, categories


def categorical(codes: np.ndarray, categories: list[str]):
    """A pandas ``Categorical`` (pandas is imported here only: the engine's readers do without it)."""
    import pandas as pd

    return pd.Categorical.from_codes(codes, categories=pd.Index(categories, dtype="str"), validate=False)


def first_rows(codes: np.ndarray, wanted: np.ndarray, count: int) -> np.ndarray:
    """For each code in ``wanted``, the row where it first appears (``codes`` in ``range(count)``)."""
    first = np.full(count, codes.size, dtype=np.int64)
    np.minimum.at(first, codes, np.arange(codes.size, dtype=np.int64))
    return first[np.asarray(wanted, dtype=np.int64)]


def string_hashes(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A 64-bit hash of every string of ``column``: a function of the string's bytes only, so equal
    strings get equal hashes in any array, chunk or position (the engine joins runs to qrels by them).

    ``h = len * C``, then for each 8-byte word ``w`` of the string (little-endian, the last one padded
    with zero bytes): ``h = mix(h ^ w)``, ``mix`` a bijection (multiply, xor-shift, multiply). Strings of
    at most 8 bytes and equal length therefore never collide. Vectorised: word ``k`` of every string
    longer than ``8k`` bytes is gathered at once from the string data.

    >>> h = string_hashes(pa.chunked_array([["D1", "clueweb09-en0000-00-00000"], ["D1"]]))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    """
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts = [_chunk_hashes(chunk) for chunk in chunks if len(chunk)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


_MIX2 = np.uint64(0x94D049BB133111EB)
_MASKS = np.array([0] + [(1 << (8 * r)) - 1 for r in range(1, 9)], dtype=np.uint64)


def _mix(hashes: np.ndarray) -> np.ndarray:
    hashes *= _MIX
    hashes ^= hashes >> np.uint64(32)
    hashes *= _MIX2
    return hashes


_SLICE = 1 << 16  # rows hashed together: the temporaries stay in the CPU cache


def _chunk_hashes(chunk: pa.Array) -> np.ndarray:
    offset_type = np.int64 if pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type) \
        else np.int32
    _, offsets_buffer, data_buffer = chunk.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=offset_type)[chunk.offset: chunk.offset + len(chunk) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    out = np.empty(len(chunk), dtype=np.uint64)
    for start in range(0, len(chunk), _SLICE):
        out[start: start + _SLICE] = _slice_hashes(offsets[start: start + _SLICE + 1].astype(np.int64), data)
    return out


def _slice_hashes(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    low, high = int(offsets[0]), int(offsets[-1])
    padded = np.zeros(high - low + 8, dtype=np.uint8)  # 8 zero bytes: the last word can be read whole
    padded[: high - low] = data[low:high]
    words = np.ndarray((high - low + 1,), dtype="<u8", buffer=padded, strides=(1,))  # a word at any byte
    starts = offsets[:-1] - low
    lengths = np.diff(offsets)
    hashes = lengths.astype(np.uint64) * _LEN
    shortest, longest = int(lengths.min()), int(lengths.max())
    for k in range(0, longest, 8):
        rows = None if shortest > k else np.flatnonzero(lengths > k)
        rest = lengths - k if rows is None else lengths[rows] - k
        word = words[starts + k] if rows is None else words[starts[rows] + k]
        if int(rest.min()) < 8:
            word &= _MASKS[np.minimum(rest, 8)]
        if rows is None:
            hashes ^= word
            hashes = _mix(hashes)
        else:
            hashes[rows] = _mix(hashes[rows] ^ word)
    return hashes


_SENTINEL = np.uint32(2**32 - 1)  # pads the grid; real hashes are capped just below it
_BLOCK = 1 << 17  # grid cells sorted together: the block stays in the CPU cache


def _suspect_rows(codes: np.ndarray, hashes: np.ndarray, code_count: int) -> np.ndarray:
    """Rows whose (code, hash) pair may occur more than once (a superset of the duplicated rows).

    When each topic's rows are contiguous (the usual run file), each topic is one row of a grid
    (padded with a sentinel when topics differ in size) of the hashes' high 32 bits (numpy sorts 32-bit
    keys several times faster than 64-bit ones), sorted row by row, a block of topics at a time; every
    line of a topic with a repeated value is a suspect. Otherwise the keys ``(code, high bits of the
    hash)`` are sorted all at once.
    """
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    sizes = np.diff(np.append(starts, codes.size))
    width = int(sizes.max())
    contiguous = np.unique(codes[starts]).size == starts.size
    if contiguous and starts.size * width <= 1.25 * codes.size:
        flagged = [np.zeros(0, dtype=np.int64)]
        step = max(1, _BLOCK // width)
        for first in range(0, starts.size, step):
            last = min(first + step, starts.size)
            low, high = starts[first], (starts[last] if last < starts.size else codes.size)
            high32 = np.minimum(hashes[low:high] >> np.uint64(32), np.uint64(_SENTINEL - 1)).astype(np.uint32)
            if np.all(sizes[first:last] == width):
                grid = high32.reshape(last - first, width)
            else:
                grid = np.full((last - first, width), _SENTINEL, dtype=np.uint32)
                block_sizes = sizes[first:last]
                row = np.repeat(np.arange(last - first), block_sizes)
                grid[row, np.arange(high - low) - np.repeat(starts[first:last] - low, block_sizes)] = high32
            grid.sort(axis=1)
            same = (grid[:, 1:] == grid[:, :-1]) & (grid[:, 1:] != _SENTINEL)
            flagged.append(first + np.flatnonzero(same.any(axis=1)))
        topics = np.concatenate(flagged)
        if not topics.size:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([np.arange(starts[t], starts[t] + sizes[t]) for t in topics])
    code_bits = max(1, int(code_count - 1).bit_length())
    keys = codes.astype(np.uint64) << np.uint64(64 - code_bits)
    if code_bits < 64:
        keys |= hashes >> np.uint64(code_bits)
    ordered = np.sort(keys)
    repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    return np.flatnonzero(np.isin(keys, repeated)) if repeated.size else np.zeros(0, dtype=np.int64)


def duplicate_rows(codes: np.ndarray, code_count: int, strings: pa.ChunkedArray | pa.Array,
                   hashes: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows repeating an earlier row's (code, string) pair (ascending), and for each the row it repeats.

    ``hashes``: :func:`string_hashes` of ``strings`` when the caller already has them. Rows with equal
    hashes are only suspects: they are compared on the strings (sorted by code, string, row).

    >>> later, first = duplicate_rows(np.array([0, 0, 1, 0]), 2, pa.chunked_array([["a", "b", "a", "a"]]))
    >>> later.tolist(), first.tolist()
    ([3], [0])
    """
    none = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if codes.size < 2:
        return none
    rows = _suspect_rows(codes, string_hashes(strings) if hashes is None else hashes, code_count)
    if rows.size < 2:
        return none
    table = pa.table([from_numpy(codes[rows].astype(np.int64)), strings.take(from_numpy(rows)),
                      from_numpy(rows)], names=["code", "string", "row"])
    table = table.take(pc.sort_indices(table, sort_keys=[("code", "ascending"), ("string", "ascending"),
                                                         ("row", "ascending")]))
    code, string, row = (table.column(name).combine_chunks() for name in ("code", "string", "row"))
    n = len(row)
    same = to_numpy(pc.and_(pc.equal(code.slice(1), code.slice(0, n - 1)),
                            pc.equal(string.slice(1), string.slice(0, n - 1))))
    if not same.any():
        return none
    group = np.cumsum(np.concatenate(([True], ~same)))  # lines of one (code, string) share a group
    row = to_numpy(row)
    first = row[np.flatnonzero(np.concatenate(([True], ~same)))][group - 1]
    later = np.flatnonzero(np.concatenate(([False], same)))
    order = np.argsort(row[later], kind="stable")
    return row[later][order], first[later][order]
