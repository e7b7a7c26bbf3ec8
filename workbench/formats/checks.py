"""Vectorised helpers for validating columns: topic codes, first rows, duplicate (topic, document) pairs.

Duplicates are found without building a Python string per row: each docno gets a 64-bit polynomial
hash computed with numpy over the arrow string buffers (``h = sum b_i * P**i mod 2**64``, via a prefix
sum made position-independent by the modular inverse of ``P``), combined with the topic code, sorted
once. Equal keys are only candidates: they are confirmed on the real strings, so a hash collision can
cost time but never report a false duplicate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

_P = 0x100000001B3  # the FNV-1 64-bit prime: odd, so invertible modulo 2**64
_P_INV = pow(_P, -1, 2**64)
_MIX = np.uint64(0xBF58476D1CE4E5B9)
_LEN = np.uint64(0x9E3779B97F4A7C15)


def sorted_categories(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[str]]:
    """Codes (int32) and categories of a string column, the categories sorted like ``strcmp``.

    Sorting the categories makes a pandas sort on the categorical column sort by the strings.

    >>> codes, categories = sorted_categories(pa.chunked_array([["9", "10"], ["9"]]))
    >>> codes.tolist(), categories
    ([1, 0, 1], ['10', '9'])
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if not pa.types.is_dictionary(column.type) and len(column) > 1:
        change = pc.not_equal(column.slice(1), column.slice(0, len(column) - 1)).to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(np.concatenate(([True], change)))
        if starts.size * 4 < len(column):  # long runs of one value (a run file's topics): encode the runs
            codes, categories = sorted_categories(column.take(pa.array(starts)))
            return np.repeat(codes, np.diff(np.append(starts, len(column)))), categories
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    values = column.dictionary.to_pylist()
    order = sorted(range(len(values)), key=values.__getitem__)
    remap = np.empty(len(values), dtype=np.int32)
    remap[order] = np.arange(len(values), dtype=np.int32)
    indices = column.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    return remap[indices], [values[i] for i in order]


def categorical(codes: np.ndarray, categories: list[str]) -> pd.Categorical:
    return pd.Categorical.from_codes(codes, categories=pd.Index(categories, dtype="str"), validate=False)


def first_rows(codes: np.ndarray, wanted: np.ndarray, count: int) -> np.ndarray:
    """For each code in ``wanted``, the row where it first appears (``codes`` in ``range(count)``)."""
    first = np.full(count, codes.size, dtype=np.int64)
    np.minimum.at(first, codes, np.arange(codes.size, dtype=np.int64))
    return first[np.asarray(wanted, dtype=np.int64)]


_WIDE = 48  # strings up to this many bytes are hashed from a padded copy (fast); longer ones by prefix sums
_power_cache: dict[int, np.ndarray] = {}


def _powers(base: int, n: int) -> np.ndarray:
    """``base**i mod 2**64`` for ``i`` in ``0..n`` (cached: the largest table computed so far is reused)."""
    cached = _power_cache.get(base)
    if cached is None or cached.size <= n:
        cached = np.empty(max(n + 1, 1 << 16), dtype=np.uint64)
        cached[0] = 1
        np.cumprod(np.full(cached.size - 1, base, dtype=np.uint64), out=cached[1:])
        _power_cache[base] = cached
    return cached[: n + 1]


def string_hashes(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A 64-bit hash of every string of ``column`` (equal strings, equal hashes)."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts = [_chunk_hashes(chunk) for chunk in chunks if len(chunk)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


def _mix(hashes: np.ndarray) -> np.ndarray:
    hashes ^= hashes >> np.uint64(31)
    hashes *= _MIX
    hashes ^= hashes >> np.uint64(29)
    return hashes


def _chunk_hashes(chunk: pa.Array) -> np.ndarray:
    width = pc.max(pc.binary_length(chunk)).as_py() or 0
    if width <= _WIDE:
        hashes = _padded_hashes(chunk, -(-max(width, 1) // 8) * 8)
        if hashes is not None:
            return hashes
    return _prefix_sum_hashes(chunk)


def _padded_hashes(chunk: pa.Array, width: int) -> np.ndarray | None:
    """Pad every string with NULs to ``width`` bytes and read the rows as 64-bit words (ASCII only)."""
    padded = pc.utf8_rpad(chunk, width=width, padding="\x00")
    _, offsets_buffer, data_buffer = padded.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[padded.offset: padded.offset + len(padded) + 1]
    if int(offsets[-1] - offsets[0]) != len(padded) * width:  # a multi-byte character: not fixed width
        return None
    words = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0]: offsets[-1]].view(np.uint64)
    words = words.reshape(len(padded), width // 8)
    hashes = words[:, 0] * _LEN
    for column in range(1, width // 8):
        hashes = _mix(hashes) ^ words[:, column]
    return _mix(hashes)


def _prefix_sum_hashes(chunk: pa.Array) -> np.ndarray:
    """``sum b_i * P**i`` over each string's bytes, from one prefix sum over the chunk's data buffer."""
    offset_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
    _, offsets_buffer, data_buffer = chunk.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=offset_type)[chunk.offset: chunk.offset + len(chunk) + 1]
    low, high = int(offsets[0]), int(offsets[-1])
    raw = np.frombuffer(data_buffer, dtype=np.uint8)[low:high] if data_buffer is not None else np.zeros(0)
    n = high - low
    prefix = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(raw.astype(np.uint64) * _powers(_P, n)[:n], out=prefix[1:])
    starts = (offsets[:-1] - low).astype(np.int64)
    ends = (offsets[1:] - low).astype(np.int64)
    hashes = (prefix[ends] - prefix[starts]) * _powers(_P_INV, n)[starts]
    hashes ^= (ends - starts).astype(np.uint64) * _LEN
    return _mix(hashes)


_SENTINEL = np.uint64(2**64 - 1)


def _repeated_keys(codes: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Key values that occur more than once.

    When each topic's rows are contiguous (the usual run file), the keys are laid out one topic per row
    of a grid (padded with a sentinel when topics differ in size) and sorted row by row, which is several
    times faster than one sort of everything; otherwise one stable sort of all keys.
    """
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    sizes = np.diff(np.append(starts, codes.size))
    width = int(sizes.max())
    if starts.size == np.count_nonzero(np.bincount(codes)) and starts.size * width <= 1.25 * codes.size:
        if np.all(sizes == width):
            grid = keys.reshape(starts.size, width).copy()
        else:
            grid = np.full((starts.size, width), _SENTINEL, dtype=np.uint64)
            rows = np.repeat(np.arange(starts.size), sizes)
            grid[rows, np.arange(codes.size) - np.repeat(starts, sizes)] = keys
        grid.sort(axis=1)
        same = (grid[:, 1:] == grid[:, :-1]) & (grid[:, 1:] != _SENTINEL)
        return np.unique(grid[:, 1:][same])
    ordered = np.sort(keys, kind="stable")
    return np.unique(ordered[1:][ordered[1:] == ordered[:-1]])


def duplicate_rows(codes: np.ndarray, code_count: int, strings: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Rows repeating an earlier row's (code, string) pair, and for each the row it repeats.

    >>> later, first = duplicate_rows(np.array([0, 0, 1, 0]), 2, pa.chunked_array([["a", "b", "a", "a"]]))
    >>> later.tolist(), first.tolist()
    ([3], [0])
    """
    if codes.size < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    code_bits = max(1, int(code_count - 1).bit_length())
    keys = codes.astype(np.uint64) << np.uint64(64 - code_bits)
    if code_bits < 64:
        keys |= string_hashes(strings) >> np.uint64(code_bits)
    repeated = _repeated_keys(codes, keys)
    if repeated.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    rows = np.flatnonzero(np.isin(keys, repeated))
    candidates = pd.DataFrame({
        "code": codes[rows],
        "string": strings.take(pa.array(rows)).to_pandas(),
        "row": rows,
    })
    candidates["first"] = candidates.groupby(["code", "string"], sort=False)["row"].transform("min")
    later = candidates[candidates["row"] != candidates["first"]]
    return later["row"].to_numpy(np.int64), later["first"].to_numpy(np.int64)
