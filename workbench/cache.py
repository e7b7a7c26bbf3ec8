"""The one in-process cache helper: a thread-safe LRU. Django-free.

Every cache of the workbench (decoded run frames, adaptive pool objects, evaluation results) is an
:class:`LRU` with keys that change whenever what they stand for changes (a run's checksum, a
collection's version), so nothing is ever invalidated by hand except by :meth:`LRU.clear` in
benchmarks and tests and :meth:`LRU.drop` where a key's owner is rebuilt.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from threading import Lock
from typing import Any
from weakref import WeakSet

__all__ = ["LRU", "clear_all"]

#: every LRU of the process, for :func:`clear_all`
_every: WeakSet = WeakSet()


def clear_all() -> None:
    """Empty every cache of the process (tests: a rolled-back test's ids, and so its versions, come again)."""
    for lru in list(_every):
        lru.clear()


class LRU:
    """Least-recently-used mapping of at most ``size`` entries, safe to share between threads.

    >>> cache = LRU(size=2)
    >>> cache.get_or_compute("a", lambda: 1), cache.get_or_compute("a", lambda: 2)
    (1, 1)
    >>> cache.put("b", 2); cache.put("c", 3); cache.get("a") is None
    True
    """

    def __init__(self, size: int = 64) -> None:
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = Lock()
        self.size = size
        _every.add(self)

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            if key not in self._data:
                return default
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def get_or_compute(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The cached value, or ``compute()`` stored under ``key`` (computed outside the lock: two
        threads may both compute a missing value; the later one is kept)."""
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        value = compute()
        self.put(key, value)
        return value

    def drop(self, predicate: Callable[[Hashable], bool]) -> None:
        """Forget every entry whose key satisfies ``predicate``."""
        with self._lock:
            for key in [k for k in self._data if predicate(k)]:
                del self._data[key]

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)
