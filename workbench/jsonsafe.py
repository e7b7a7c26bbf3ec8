"""JSON of what numpy computed. Django-free."""

from __future__ import annotations

__all__ = ["numpy_scalar"]


def numpy_scalar(value):
    """``json.dumps(..., default=numpy_scalar)``: a numpy scalar as the Python number it holds; anything else
    JSON cannot write is refused (TypeError), as without the hook."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot store {type(value).__name__}")
