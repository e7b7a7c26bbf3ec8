"""Writing in turn: the parts of a split job that fill one table write their pieces in the table's index order.

Two sessions appending rows to one PostgreSQL table at once, each at its own place in a B-tree index (a pool's
entries by topic, say), are barely faster together than one session alone: on this project's 2-core benchmark
machine, PostgreSQL copied a pool's 3.6 million entries from two sessions at once (half the topics each) in
0.86 to 1.00 of the time one session took. PostgreSQL appends a row without descending from the index's root
only at its right-most page, which only the session whose rows sort last is at; both also write and split
pages under the same parents. Copied one piece after the other in index order, each piece is appended at the
end, as from one session.

So a job split into parts hands each part several *pieces* (numbered in index order: part ``i`` of ``n`` has
pieces ``i``, ``i + n``, ...) and each part computes a piece, then writes it in its turn: once the piece before
it has been written. While one part writes, the other computes its next piece, so the writing (which no
longer contends) overlaps the computing (which scales with the workers).

The turn is a session-level advisory lock per piece (:class:`Turns`), held by its part from the part's start
until the piece is written: whoever writes the next piece waits for it. A part that has not started yet, or
whose worker died (its session ended, its locks with it), holds nothing, so nobody waits for it; the order is
only ever a matter of speed, never of correctness, and a wait gives up after ``WAIT`` seconds. Elsewhere than on
PostgreSQL (SQLite: one writer at a time anyway) there is no waiting.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator

from django.db import DatabaseError, connection

__all__ = ["POLL", "WAIT", "Turns"]

#: the longest a piece waits for the one before it (then it is written anyway: out of order, only slower)
WAIT = 600.0
#: the longest pause between two asks of a waiting turn (a try-lock query each)
POLL = 0.01


class Turns:
    """The writing turns of one part's pieces of the job ``job_id``: ``with Turns(job_id, pieces) as turns:``
    then ``with turns.turn(piece):`` around the writing of each piece."""

    def __init__(self, job_id: int, pieces: Iterable[int]):
        self.key = int(job_id) % 2**31  # advisory locks' first key: an int4
        self.held: set[int] = set()
        self.pieces = list(pieces)
        self.active = connection.vendor == "postgresql"

    def __enter__(self) -> Turns:
        for piece in self.pieces:  # held until written; a piece another session holds (a stale run) is skipped
            if self.active and self._try(piece):
                self.held.add(piece)
        return self

    def __exit__(self, *exc) -> None:
        try:
            for piece in sorted(self.held):
                self._release(piece)
        except DatabaseError:  # the session is gone (the database restarted): its locks went with it
            self.held.clear()

    @contextlib.contextmanager
    def turn(self, piece: int) -> Iterator[None]:
        """Around the writing of ``piece``: waits until the piece before it is written, then, once written,
        lets the next one go."""
        if self.active and piece > 0 and piece - 1 not in self.held:
            self._wait(piece - 1)
        try:
            yield
        finally:
            self._release(piece)

    def _try(self, piece: int) -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [self.key, piece])
            return bool(cursor.fetchone()[0])

    def _unlock(self, piece: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [self.key, piece])

    def _release(self, piece: int) -> None:
        if piece in self.held:
            self.held.discard(piece)
            self._unlock(piece)

    def _wait(self, piece: int) -> None:
        """Until nobody holds ``piece`` (written, or never started), at most ``WAIT`` seconds. Asked every
        ``POLL`` seconds at most: the pieces are written back to back, so a turn taken late is time lost
        (with 50 ms, about 25 ms at each of the 15 hand-overs of a split pool build)."""
        deadline, pause = time.monotonic() + WAIT, 0.001
        while time.monotonic() < deadline:
            if self._try(piece):
                self._unlock(piece)
                return
            time.sleep(pause)
            pause = min(pause * 2, POLL)
