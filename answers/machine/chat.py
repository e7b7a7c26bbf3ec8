"""The answers' drafter and assigner ask an OpenAI-compatible chat endpoint through the client the ``openai`` judge
uses (``judging.machine.chat``: its limits, retries and one-line failures); this reads their configuration into
one, each fault a :class:`MachineError` in one line. Django-free."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

from answers.machine.base import MachineError
from judging.machine import transport
from judging.machine.chat import DEADLINE, MAX_REPLY_BYTES, ChatClient

__all__ = ["client", "in_order"]

R = TypeVar("R")


def client(config: dict, options: dict, *, key: str | None = None) -> ChatClient:
    """``config``: ``base_url`` and ``model`` (from the deployment's endpoint) and the deployment's ``deadline`` and
    ``max_reply_bytes``; ``options``: the declared :class:`ChatOptions`."""
    if not config.get("base_url"):
        raise MachineError("an endpoint is needed: one that JUDGE_ENDPOINTS declares")
    try:
        base_url = transport.checked_base_url(str(config["base_url"]))
    except ValueError as exc:
        raise MachineError(f"the endpoint's base URL {exc}") from None
    model = str(config.get("model") or "")
    if not model:
        raise MachineError("a model is needed: the model name the endpoint serves")
    try:
        deadline = float(config.get("deadline", DEADLINE))
        max_reply_bytes = int(config.get("max_reply_bytes", MAX_REPLY_BYTES))
    except (TypeError, ValueError) as exc:
        raise MachineError(f"a limit of the endpoint is not a number: {exc}") from None
    return ChatClient(base_url, model, options, deadline=deadline, max_reply_bytes=max_reply_bytes, key=key)


def in_order(ask: Callable[..., R], calls: Iterable[tuple], concurrency: int, tick: float | None) -> Iterator[R | None]:
    """``ask(*call)`` for every call, ``concurrency`` at a time, the results in the calls' order; with ``tick``
    (seconds), None each time that long passes without one done (a job says it is alive); stopped early, the
    requests not sent yet are dropped."""
    pool = ThreadPoolExecutor(max_workers=concurrency)
    try:
        for future in [pool.submit(ask, *call) for call in calls]:
            while not wait([future], timeout=tick).done:
                yield None
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
