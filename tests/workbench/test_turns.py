"""Writing in turn (``workbench.jobs.turns``): the parts of a split job write their pieces in the pieces' order, on
PostgreSQL, each part in its own session; a piece whose part has not started, whose session ended, or that takes
too long holds nobody up."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from workbench.jobs import turns
from workbench.jobs.turns import Turns

pytestmark = pytest.mark.django_db(transaction=True)


def _postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("advisory locks are PostgreSQL's; `make test-postgres` (in CI) runs this on PostgreSQL")


def _in_session(work, *args) -> threading.Thread:
    """``work`` in a thread of its own: its own database session, closed at the end (its locks with it)."""
    def body():
        try:
            work(*args)
        finally:
            connection.close()
    thread = threading.Thread(target=body)
    thread.start()
    return thread


def test_elsewhere_than_postgresql_nothing_waits():
    if connection.vendor == "postgresql":
        pytest.skip("SQLite's case: one writer at a time anyway")
    with Turns(7, [0, 2]) as mine:
        assert mine.held == set()
        started = time.monotonic()
        with mine.turn(2):
            pass
        assert time.monotonic() - started < 0.5


def test_each_piece_is_written_after_the_piece_before_it_by_another_part():
    _postgresql()
    order: list[str] = []
    holding = threading.Event()

    def other_part():  # pieces 1 and 3
        with Turns(41, [1, 3]) as theirs:
            holding.set()
            with theirs.turn(1):
                order.append("write 1")
            time.sleep(0.3)  # pooling piece 3
            with theirs.turn(3):
                order.append("write 3")

    with Turns(41, [0, 2]) as mine:  # pieces 0 and 2, from the part's start
        other = _in_session(other_part)
        assert holding.wait(10)
        time.sleep(0.5)  # pooling piece 0: piece 1 waits meanwhile
        assert order == []
        with mine.turn(0):
            order.append("write 0")
        with mine.turn(2):  # waits for piece 1
            order.append("write 2")
    other.join(10)
    assert order == ["write 0", "write 1", "write 2", "write 3"]


def test_a_piece_whose_part_has_not_started_or_has_died_holds_nobody_up():
    _postgresql()
    with Turns(42, [3]) as mine:  # piece 2's part never started: nobody holds it
        started = time.monotonic()
        with mine.turn(3):
            pass
        assert time.monotonic() - started < 1
    held = threading.Event()

    def dies():  # holds piece 0 then its session ends (a worker killed) without writing it
        turns_ = Turns(42, [0]).__enter__()
        assert turns_.held == {0}
        held.set()

    _in_session(dies).join(10)
    assert held.is_set()
    with Turns(42, [1]) as mine:
        started = time.monotonic()
        with mine.turn(1):
            pass
        assert time.monotonic() - started < 1


def test_a_piece_waits_at_most_WAIT_seconds_for_the_one_before(monkeypatch):
    _postgresql()
    monkeypatch.setattr(turns, "WAIT", 0.5)
    holding, done = threading.Event(), threading.Event()

    def stuck():  # holds piece 0 and never writes it
        with Turns(43, [0]):
            holding.set()
            done.wait(20)

    other = _in_session(stuck)
    assert holding.wait(10)
    try:
        with Turns(43, [1]) as mine:
            started = time.monotonic()
            with mine.turn(1):
                waited = time.monotonic() - started
        assert 0.5 <= waited < 3  # written anyway: out of order is only slower
    finally:
        done.set()
        other.join(10)
