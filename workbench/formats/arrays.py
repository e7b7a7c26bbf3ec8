"""numpy <-> pyarrow for fixed-width columns, zero-copy where possible, and without importing pandas.

pyarrow's own ``Array.to_numpy``, ``pa.array(ndarray)`` and ``pa.scalar`` import pandas on their first
call (to recognise pandas objects): a third of a second that the ``trec_eval`` command line does not
otherwise need. These helpers go through the arrays' buffers instead.

>>> import pyarrow.compute as pc
>>> to_numpy(pc.index_in(pa.chunked_array([["b", "x"], ["a"]]), value_set=from_strings(["a", "b"])), -1)
array([ 1, -1,  0], dtype=int32)
"""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_NUMPY_TYPES = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
                pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32,
                pa.uint64(): np.uint64, pa.float32(): np.float32, pa.float64(): np.float64}
_ARROW_TYPES = {np.dtype(v): k for k, v in _NUMPY_TYPES.items()}


def to_numpy(values: pa.Array | pa.ChunkedArray, null: int | float | None = None) -> np.ndarray:
    """A numpy view (one chunk) or copy (several) of a numeric or boolean array; nulls become ``null``
    (an array with nulls and ``null=None`` is refused)."""
    if isinstance(values, pa.ChunkedArray):
        parts = [to_numpy(chunk, null) for chunk in values.chunks]
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=_numpy_type(values.type))
    n, offset = len(values), values.offset
    buffers = values.buffers()
    if pa.types.is_boolean(values.type):
        out = _bits(buffers[1], offset, n)
    else:
        dtype = _numpy_type(values.type)
        out = np.frombuffer(buffers[1], dtype=dtype)[offset: offset + n] if n else np.zeros(0, dtype)
    if values.null_count:
        if null is None:
            raise ValueError("the array has nulls")
        out = np.where(_bits(buffers[0], offset, n), out, null).astype(out.dtype)
    return out


def _numpy_type(arrow_type: pa.DataType):
    try:
        return _NUMPY_TYPES[arrow_type]
    except KeyError:
        raise TypeError(f"no numpy view of {arrow_type}") from None


def _bits(buffer: pa.Buffer, offset: int, n: int) -> np.ndarray:
    raw = np.frombuffer(buffer, dtype=np.uint8)
    return np.unpackbits(raw, count=offset + n, bitorder="little")[offset:].astype(bool)


def from_numpy(values: np.ndarray) -> pa.Array:
    """A pyarrow array viewing a numeric numpy array (copied only if not contiguous)."""
    values = np.ascontiguousarray(values)
    if values.dtype == np.intp and values.dtype != np.int64:  # pragma: no cover (32-bit platforms)
        values = values.astype(np.int64)
    return pa.Array.from_buffers(_ARROW_TYPES[values.dtype], len(values), [None, pa.py_buffer(values)])


def from_strings(values: list[str]) -> pa.Array:
    """A pyarrow string array of Python strings (offsets and UTF-8 bytes built here)."""
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    if offsets[-1] < 2**31:
        return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets.astype(np.int32)),
                                                                 pa.py_buffer(b"".join(encoded))])
    return pa.Array.from_buffers(pa.large_string(), len(encoded),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def _pandas():
    """pandas if something has imported it (then values may be pandas objects), else None: these helpers
    never import pandas themselves (the ``trec_eval`` command line does not load it)."""
    return sys.modules.get("pandas")


def _plain_strings(arr: pa.Array) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary.take(arr.indices)
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = pc.cast(arr, pa.string())
    return arr


def as_arrow_strings(values) -> pa.Array:
    """A pyarrow string array from a pandas column / array / Categorical, a pyarrow array or a list;
    zero-copy when the values are already arrow-backed strings. The one pandas -> Arrow string helper.

    >>> as_arrow_strings(["b", 1]).to_pylist()
    ['b', '1']
    """
    if isinstance(values, pa.ChunkedArray | pa.Array):
        return _plain_strings(values)
    pd = _pandas()
    if pd is not None and isinstance(values, pd.Series):
        values = values.array
    if pd is not None and isinstance(values, pd.Categorical):
        categories = as_arrow_strings(pd.Series(values.categories))
        return categories.take(pa.array(values.codes)) if len(values) else pa.array([], pa.string())
    try:
        arr = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        arr = pa.array([str(v) for v in values], pa.string())
    return _plain_strings(arr)


def as_utf8(values) -> pa.Array:
    """:func:`as_arrow_strings` cast to ``pa.string()`` exactly (for schemas and dictionaries that want it)."""
    arr = as_arrow_strings(values)
    return arr if arr.type == pa.string() else arr.cast(pa.string())
