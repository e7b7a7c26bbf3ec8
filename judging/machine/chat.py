"""One question to an OpenAI-compatible chat-completions endpoint, with the deployment's limits: the request goes
through ``judging.machine.transport`` (no redirect followed, the reply read up to ``max_reply_bytes``, a
``deadline`` on the whole request); 429 (waiting what ``Retry-After`` says), 5xx, time-outs and dropped connections
are retried with back-off, ``retries`` times; anything else that is not a readable reply is a :class:`ChatFailure`
in one line. The key is given by the caller (``OPENAI_API_KEY`` when none is given) and never recorded.
Django-free; the ``openai`` judge and the answers' drafter and assigner use it."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from judging.machine import transport
from workbench.formats.declarations import param

__all__ = ["DEADLINE", "MAX_RAW_CHARS", "MAX_REPLY_BYTES", "ChatClient", "ChatFailure", "ChatOptions", "Reply",
           "prompt_hash", "short"]

#: characters of a reply kept with a verdict, of an endpoint's words shown in a failure's line, of a failure's line
MAX_RAW_CHARS, MAX_DETAIL_CHARS, MAX_ERROR_CHARS = 4000, 160, 300
#: the defaults of the limits the deployment sets (JUDGE_REQUEST_DEADLINE, JUDGE_REPLY_MAX_BYTES)
DEADLINE, MAX_REPLY_BYTES = 120.0, 1 << 20


def short(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    """Words as a failure's line shows them: whitespace collapsed, cut to ``limit``."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class ChatOptions:
    """What a user may set on a chat machine (the endpoint and model come from JUDGE_ENDPOINTS)."""

    concurrency: int = param(4, min=1, max=64, help="Requests at once")
    timeout: float = param(60.0, min=0, min_open=True, max=3600, unit="s",
                           help="Seconds of silence a request waits; JUDGE_REQUEST_DEADLINE bounds the whole request")
    retries: int = param(4, min=0, max=20, help="Retries of a rate-limited, failed or timed-out request")
    backoff: float = param(1.0, min=0, max=600, unit="s", help="Seconds before the first retry, doubled at each one")
    max_wait: float = param(60.0, min=0, max=3600, unit="s", help="The longest wait between two retries, in seconds")


class ChatFailure(Exception):
    """No usable reply: ``str()`` is one line; ``raw`` what the endpoint said, when it said something, and the
    tokens it counted."""

    def __init__(self, why: str, raw: str = "", started: float | None = None, *, prompt_tokens: int = 0,
                 completion_tokens: int = 0) -> None:
        super().__init__(short(why, MAX_ERROR_CHARS))
        self.raw = raw[:MAX_RAW_CHARS]
        self.latency_ms = _ms(started) if started is not None else 0
        self.prompt_tokens, self.completion_tokens = prompt_tokens, completion_tokens


class _Retry(Exception):
    def __init__(self, why: str, wait: float | None = None) -> None:
        super().__init__(why)
        self.wait = wait


@dataclass(frozen=True)
class Reply:
    content: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int
    #: sha256 (hex) of the exact prompt sent: ``system + "\\n" + prompt``, or the prompt alone without a system
    prompt_hash: str


def prompt_hash(system: str | None, prompt: str) -> str:
    """The sha256 (hex) recorded with what a chat machine says: of ``system + "\\n" + prompt``, or of the prompt
    alone when there is no system message."""
    sent = prompt if system is None else f"{system}\n{prompt}"
    return hashlib.sha256(sent.encode("utf-8")).hexdigest()


class ChatClient:
    """``base_url`` (checked by ``transport.checked_base_url``) and ``model`` come from the deployment's endpoint;
    ``options`` holds ``timeout``, ``retries``, ``backoff`` and ``max_wait`` (:class:`ChatOptions`)."""

    def __init__(self, base_url: str, model: str, options: Mapping, *, deadline: float = DEADLINE,
                 max_reply_bytes: int = MAX_REPLY_BYTES, key: str | None = None) -> None:
        self.base_url, self.model = base_url, model
        self.timeout, self.retries, self.backoff = options["timeout"], options["retries"], options["backoff"]
        self.max_wait, self.deadline, self.max_reply_bytes = options["max_wait"], deadline, max_reply_bytes
        self._key = os.environ.get("OPENAI_API_KEY", "") if key is None else key

    @property
    def host(self) -> str:
        parts = urlsplit(self.base_url)
        return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname or "")

    def ask(self, system: str | None, prompt: str) -> Reply:
        """The endpoint's answer to ``prompt`` (temperature 0; after a system message unless ``system`` is None),
        after the retries; :class:`ChatFailure` otherwise."""
        messages = [{"role": "user", "content": prompt}]
        if system is not None:
            messages.insert(0, {"role": "system", "content": system})
        hashed = prompt_hash(system, prompt)
        started, attempt = time.perf_counter(), 0
        while True:
            try:
                data, raw = self._post({"model": self.model, "temperature": 0, "messages": messages}, started)
                break
            except _Retry as retry:
                attempt += 1
                if attempt > self.retries:
                    raise ChatFailure(f"{retry} (gave up after {attempt} attempts)", started=started) from None
                wait = retry.wait if retry.wait is not None else self.backoff * 2 ** (attempt - 1)
                time.sleep(min(wait, self.max_wait))
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        tokens = {"prompt_tokens": _count(usage.get("prompt_tokens")),
                  "completion_tokens": _count(usage.get("completion_tokens"))}
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
            if not isinstance(content, str):
                raise TypeError
        except (KeyError, IndexError, TypeError):
            raise ChatFailure("the endpoint's reply has no choices[0].message.content", raw, started,
                              **tokens) from None
        return Reply(content, str(choice.get("finish_reason") or ""), latency_ms=_ms(started), prompt_hash=hashed,
                     **tokens)

    def _post(self, body: dict, started: float) -> tuple[dict, str]:
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        try:
            answer = transport.post(self.base_url, "/chat/completions", json.dumps(body).encode(), headers,
                                    timeout=self.timeout, deadline=self.deadline, max_bytes=self.max_reply_bytes)
        except transport.TooLarge:
            raise ChatFailure(f"the endpoint's reply is larger than {self.max_reply_bytes:,} bytes "
                              f"(JUDGE_REPLY_MAX_BYTES); refused", started=started) from None
        except transport.Expired:
            raise _Retry(f"no complete reply within the deadline of {self.deadline:g} s") from None
        except TimeoutError:
            raise _Retry(f"no reply within {self.timeout:g} s") from None
        except (http.client.HTTPException, OSError) as exc:
            raise _Retry(short(f"the connection failed: {type(exc).__name__} {exc}")) from None
        if 300 <= answer.status < 400:
            raise ChatFailure(f"the endpoint redirected to {answer.redirect_to} (HTTP {answer.status}); "
                              f"redirects are not followed", started=started)
        if answer.status >= 400:
            detail = short(answer.body.decode("utf-8", "replace"))
            if answer.status == 429:
                raise _Retry(f"HTTP 429 (rate limited) {detail}".strip(), _retry_after(answer.headers.get("Retry-After")))
            if answer.status >= 500:
                raise _Retry(f"HTTP {answer.status} {detail}".strip())
            raise ChatFailure(f"the endpoint refused the request: HTTP {answer.status} {detail}".strip(), started=started)
        text = answer.body.decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except ValueError:
            raise ChatFailure(f"the endpoint's reply is not JSON: {short(text)!r}", text, started) from None
        if not isinstance(data, dict):
            raise ChatFailure("the endpoint's reply is not a JSON object", text, started)
        return data, text


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: back off as usual


def _count(value) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
