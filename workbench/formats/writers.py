"""Writing space-separated TREC files (runs, qrels), one vectorised string join per file.

Floats are written in their shortest round-trip form (``0.1``, ``1e+22``), so reading the file back
gives the same float64 values. Identifiers must be non-empty and free of whitespace, otherwise the
file could not be read back: such values are refused before anything is written.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from workbench.formats.sources import Source, is_path, is_text_stream


def _identifiers(name: str, values: Any, n: int) -> pa.Array:
    if isinstance(values, str):
        array = pa.array([values] * n, type=pa.string()) if n else pa.array([], pa.string())
    else:
        series = pd.Series(values)
        if series.isna().any():
            raise ValueError(f"column {name!r} has missing values")
        array = pa.array(series.astype(str), type=pa.string())
        if isinstance(array, pa.ChunkedArray):  # a frame concatenated from Arrow-backed parts
            array = array.combine_chunks()
    if n and (pc.min(pc.utf8_length(array)).as_py() == 0
              or pc.any(pc.match_substring_regex(array, r"[\t\n\v\f\r ]")).as_py()):
        raise ValueError(f"column {name!r} has an empty value or one containing whitespace")
    return array


def _is_numeric(values: Any) -> bool:
    if isinstance(values, str):
        return False
    dtype = getattr(values, "dtype", None)
    if dtype is None:
        dtype = np.asarray(values).dtype
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _numbers(name: str, values: Any) -> pa.Array:
    array = np.asarray(values)
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise ValueError(f"column {name!r} has a value that is not a finite number")
    return pc.cast(pa.array(array), pa.string())  # floats: shortest round-trip form


def write_columns(columns: dict[str, Any], n: int, dest: Source) -> None:
    """Write ``columns`` (name -> values, or one ``str`` for every line) as space-separated lines."""
    fields = []
    for name, values in columns.items():
        fields.append(_numbers(name, values) if _is_numeric(values) else _identifiers(name, values, n))
    data = b""
    if n:
        lines = pc.binary_join_element_wise(*fields, pa.array([""] * n), " ")  # a trailing space...
        lines = pc.utf8_replace_slice(lines, start=-1, stop=2**31 - 1, replacement="\n")  # ...becomes "\n"
        _, offsets, body = lines.buffers()
        bounds = np.frombuffer(offsets, dtype=np.int32)[lines.offset: lines.offset + n + 1]
        data = body.to_pybytes()[int(bounds[0]): int(bounds[-1])]
    _write_bytes(data, dest)


def _write_bytes(data: bytes, dest: Source) -> None:
    if is_path(dest):
        path = Path(dest)  # type: ignore[arg-type]
        if path.suffix == ".gz":
            with gzip.open(path, "wb") as handle:
                handle.write(data)
        else:
            path.write_bytes(data)
    elif is_text_stream(dest) or isinstance(dest, io.TextIOBase):
        dest.write(data.decode("utf-8"))  # type: ignore[union-attr]
    else:
        dest.write(data)  # type: ignore[union-attr]
