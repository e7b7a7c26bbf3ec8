"""The answers' drafter and assigner ask an OpenAI-compatible chat endpoint through the client the ``openai`` judge
uses (``judging.machine.chat``: its limits, retries and one-line failures); this reads their configuration into
one, each fault a :class:`MachineError` in one line. Django-free."""

from __future__ import annotations

from answers.machine.base import MachineError
from judging.machine import transport
from judging.machine.chat import DEADLINE, MAX_REPLY_BYTES, ChatClient

__all__ = ["client"]


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
