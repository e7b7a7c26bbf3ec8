"""One question to an OpenAI-compatible chat endpoint, with the limits and retries of the ``openai`` judge: the
request goes through ``judging.machine.transport`` (no redirect followed, the reply read up to a size limit, a
deadline on the whole request); 429 (waiting what ``Retry-After`` says), 5xx, time-outs and dropped connections
are retried with back-off, ``retries`` times; anything else that is not a readable reply is a :class:`ChatFailure`
in one line. The key is given by the caller (``OPENAI_API_KEY`` when none is given) and never recorded.
Django-free; the drafter and the assigner use it."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from answers.machine.base import MachineError
from judging.machine import transport
from judging.machine.openai_chat import DEADLINE, MAX_REPLY_BYTES
from workbench.formats.declarations import param

__all__ = ["ChatClient", "ChatFailure", "ChatOptions", "Reply", "short"]

#: characters of a reply kept with a verdict, and of an endpoint's words shown in a failure's line
MAX_RAW_CHARS, MAX_DETAIL_CHARS = 4000, 160


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
    """No usable reply: ``str()`` is one line; ``raw`` what the endpoint said, when it said something."""

    def __init__(self, why: str, raw: str = "", started: float | None = None) -> None:
        super().__init__(short(why, 300))
        self.raw = raw[:MAX_RAW_CHARS]
        self.latency_ms = _ms(started) if started is not None else 0


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
    prompt_hash: str


class ChatClient:
    """``config``: ``base_url`` and ``model`` (from the deployment's endpoint), the declared options, and the
    deployment's ``deadline`` and ``max_reply_bytes``."""

    def __init__(self, config: dict, options: dict, *, key: str | None = None) -> None:
        if not config.get("base_url"):
            raise MachineError("an endpoint is needed: one that JUDGE_ENDPOINTS declares")
        try:
            self.base_url = transport.checked_base_url(str(config["base_url"]))
        except ValueError as exc:
            raise MachineError(f"the endpoint's base URL {exc}") from None
        self.model = str(config.get("model") or "")
        if not self.model:
            raise MachineError("a model is needed: the model name the endpoint serves")
        self.timeout, self.retries, self.backoff = options["timeout"], options["retries"], options["backoff"]
        self.max_wait, self.concurrency = options["max_wait"], options["concurrency"]
        try:
            self.deadline = float(config.get("deadline", DEADLINE))
            self.max_reply_bytes = int(config.get("max_reply_bytes", MAX_REPLY_BYTES))
        except (TypeError, ValueError) as exc:
            raise MachineError(f"a limit of the endpoint is not a number: {exc}") from None
        self._key = os.environ.get("OPENAI_API_KEY", "") if key is None else key

    @property
    def host(self) -> str:
        parts = urlsplit(self.base_url)
        return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)

    def ask(self, system: str, prompt: str) -> Reply:
        """The endpoint's answer to ``prompt`` (temperature 0), after the retries; :class:`ChatFailure` otherwise."""
        body = {"model": self.model, "temperature": 0,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}]}
        hashed = hashlib.sha256(f"{system}\n{prompt}".encode()).hexdigest()
        started, attempt = time.perf_counter(), 0
        while True:
            try:
                data, raw = self._post(body, started)
                break
            except _Retry as retry:
                attempt += 1
                if attempt > self.retries:
                    raise ChatFailure(f"{retry} (gave up after {attempt} attempts)", started=started) from None
                wait = retry.wait if retry.wait is not None else self.backoff * 2 ** (attempt - 1)
                time.sleep(min(wait, self.max_wait))
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
            if not isinstance(content, str):
                raise TypeError
        except (KeyError, IndexError, TypeError):
            raise ChatFailure("the endpoint's reply has no choices[0].message.content", raw, started) from None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return Reply(content, str(choice.get("finish_reason") or ""), _count(usage.get("prompt_tokens")),
                     _count(usage.get("completion_tokens")), _ms(started), hashed)

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
        return None


def _count(value) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
