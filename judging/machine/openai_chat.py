"""The ``openai`` judge: any OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp's server, Ollama, a
hosted API) asked UMBRELA's zero-shot question (Upadhyay et al., 2024: grades 0-3, answered as
``##final score: N``) with the collection's grade definitions and guidelines. Django-free; stdlib HTTP.

Temperature 0; ``samples`` > 1 asks several times and takes the majority (a tie goes to the lower grade).
Requests run ``concurrency`` at a time, each with a timeout; 429 (waiting what ``Retry-After`` says), 5xx,
time-outs and dropped connections are retried with back-off, ``retries`` times. A reply that cannot be read
(not JSON, cut off, no score, a grade off the scale) is a failure recorded in one line, never a guessed grade.
The key comes from ``OPENAI_API_KEY`` only and is never recorded.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from judging.machine.base import JudgeError, Pair, Provenance, Scale, Verdict

__all__ = ["DEFAULT_TEMPLATE", "OpenAIJudge", "parse_grade"]

DEFAULT_TEMPLATE = """Given a query and a passage, you must provide a score on an integer scale of {low} to {high} \
with the following meanings:
{grades}
{guidelines}
Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, \
category 2 if passage presents something very important related to the entire topic but also has some extra \
information and category 3 if the passage only and entirely refers to the topic. If none of the above satisfies \
give it category 0.

Query: {query}
Passage: {passage}

Split this problem into steps:
Consider the underlying intent of the search.
Measure how well the content matches a likely intent of the query (M).
Measure how trustworthy the passage is (T).
Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score \
must be an integer value only.
Do not provide any code in result. Provide each score in the format of: ##final score: score without providing \
any reasoning."""

_SCORE = re.compile(r"final\s+score\s*[:=]\s*\**\s*(-?\d+)", re.IGNORECASE)
#: characters of a document put in the prompt
MAX_PASSAGE_CHARS = 4000


def parse_grade(content: str, grades: Iterable[int]) -> int:
    """The grade in a reply (its last ``final score: N``); ValueError saying why when there is none or it is
    off the scale."""
    found = _SCORE.findall(content or "")
    if not found:
        raise ValueError("the reply has no '##final score: N'")
    grade = int(found[-1])
    if grade not in set(grades):
        raise ValueError(f"the reply's score {grade} is not on the scale {sorted(set(grades))}")
    return grade


class _Retry(Exception):
    def __init__(self, why: str, wait: float | None = None) -> None:
        super().__init__(why)
        self.wait = wait


class OpenAIJudge:
    kind = "openai"

    def __init__(self, config: dict | None = None, *, scale: Scale, calibration=None) -> None:
        config = dict(config or {})
        self.base_url = str(config.get("base_url") or "").rstrip("/")
        self.model = str(config.get("model") or "")
        if urlsplit(self.base_url).scheme not in ("http", "https") or not urlsplit(self.base_url).hostname:
            raise JudgeError(f"--base-url must be an http(s) URL such as http://127.0.0.1:8000/v1, not {self.base_url!r}")
        if not self.model:
            raise JudgeError("--model is needed: the model name the endpoint serves")
        try:
            self.timeout = float(config.get("timeout", 60))
            self.retries = int(config.get("retries", 4))
            self.backoff = float(config.get("backoff", 1.0))
            self.max_wait = float(config.get("max_wait", 60))
            self.concurrency = max(1, int(config.get("concurrency", 4)))
            self.samples = max(1, int(config.get("samples", 1)))
        except (TypeError, ValueError) as exc:
            raise JudgeError(f"a number option of the openai judge is not a number: {exc}") from None
        self.template = str(config.get("template") or DEFAULT_TEMPLATE)
        self.scale = scale
        self._key = os.environ.get("OPENAI_API_KEY", "")

    def provenance(self) -> Provenance:
        host = urlsplit(self.base_url).hostname or ""
        port = urlsplit(self.base_url).port
        return Provenance(model=self.model, model_version=self.model, endpoint_host=f"{host}:{port}" if port else host,
                          prompt_hash=hashlib.sha256(self.template.encode()).hexdigest()[:16])

    def prompt(self, pair: Pair) -> str:
        grades = "\n".join(f"{g} = {self.scale.labels.get(g, g)}"
                           + (f": {self.scale.descriptions[g]}" if self.scale.descriptions.get(g) else "")
                           for g in self.scale.grades)
        return self.template.format(
            low=min(self.scale.grades), high=max(self.scale.grades), grades=grades,
            guidelines=(f"Guidelines:\n{self.scale.guidelines}\n" if self.scale.guidelines else ""),
            query=pair.query, passage=pair.text[:MAX_PASSAGE_CHARS])

    # --- one request -------------------------------------------------------------------------------
    def _post(self, body: dict) -> tuple[dict, str]:
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        request = urllib.request.Request(f"{self.base_url}/chat/completions", data=json.dumps(body).encode(),
                                         headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - http(s) checked
                text = response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            detail = " ".join(exc.read().decode("utf-8", "replace").split())[:300]
            if exc.code == 429:
                raise _Retry(f"HTTP 429 (rate limited) {detail}".strip(), _retry_after(exc.headers.get("Retry-After"))) from None
            if exc.code >= 500:
                raise _Retry(f"HTTP {exc.code} {detail}".strip()) from None
            raise RuntimeError(f"the endpoint refused the request: HTTP {exc.code} {detail}".strip()) from None
        except TimeoutError:
            raise _Retry(f"no reply within {self.timeout:g} s") from None
        except (http.client.HTTPException, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise _Retry(f"no reply within {self.timeout:g} s") from None
            raise _Retry(f"the connection failed: {type(exc).__name__} {reason}".strip()) from None
        try:
            data = json.loads(text)
        except ValueError:
            raise RuntimeError(f"the endpoint's reply is not JSON: {' '.join(text.split())[:200]!r}") from None
        return data, text

    def _ask(self, pair: Pair) -> Verdict:
        """One sample: the grade, or a failure after the retries."""
        body = {"model": self.model, "temperature": 0,
                "messages": [{"role": "user", "content": self.prompt(pair)}]}
        started, attempt, raw = time.perf_counter(), 0, ""
        while True:
            try:
                data, raw = self._post(body)
                break
            except _Retry as retry:
                attempt += 1
                if attempt > self.retries:
                    return self._failure(pair, f"{retry} (gave up after {attempt} attempts)", started, raw)
                wait = retry.wait if retry.wait is not None else self.backoff * 2 ** (attempt - 1)
                time.sleep(min(wait, self.max_wait))
            except RuntimeError as exc:
                return self._failure(pair, str(exc), started, raw)
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        tokens = {"prompt_tokens": _count(usage.get("prompt_tokens")),
                  "completion_tokens": _count(usage.get("completion_tokens"))}
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
            if not isinstance(content, str):
                raise TypeError
        except (KeyError, IndexError, TypeError):
            return self._failure(pair, "the endpoint's reply has no choices[0].message.content", started, raw, **tokens)
        try:
            grade = parse_grade(content, self.scale.grades)
        except ValueError as exc:
            why = str(exc)
            if choice.get("finish_reason") == "length":
                why = "the reply was cut off (finish_reason length) before its score"
            return self._failure(pair, why, started, content, **tokens)
        return Verdict(pair.qid, pair.docno, ok=True, grade=grade, score=float(grade), raw_reply=content,
                       latency_ms=_ms(started), **tokens)

    def _failure(self, pair: Pair, why: str, started: float, raw: str, **tokens) -> Verdict:
        return Verdict(pair.qid, pair.docno, ok=False, error=" ".join(why.split())[:500], raw_reply=raw[:4000],
                       latency_ms=_ms(started), **tokens)

    def judge_pair(self, pair: Pair) -> Verdict:
        if not pair.text.strip():
            return Verdict(pair.qid, pair.docno, ok=False, error="the document has no text to read")
        answers = [self._ask(pair) for _ in range(self.samples)]
        failed = [a for a in answers if not a.ok]
        tokens = {"prompt_tokens": sum(a.prompt_tokens for a in answers),
                  "completion_tokens": sum(a.completion_tokens for a in answers),
                  "latency_ms": sum(a.latency_ms for a in answers)}
        if failed:
            return Verdict(pair.qid, pair.docno, ok=False, error=failed[0].error, raw_reply=failed[0].raw_reply, **tokens)
        if len(answers) == 1:
            return answers[0]
        votes = Counter(a.grade for a in answers)
        top = max(votes.values())
        grade = min(g for g, n in votes.items() if n == top)
        return Verdict(pair.qid, pair.docno, ok=True, grade=grade, score=votes[grade] / len(answers),
                       raw_reply="\n---\n".join(a.raw_reply for a in answers), **tokens)

    def judge(self, topics: Iterable[list[Pair]], wanted: set[tuple[str, str]] | None = None) -> Iterator[Verdict]:
        """Verdicts as they come, ``concurrency`` requests at a time."""
        pairs = [p for batch in topics for p in batch if wanted is None or (p.qid, p.docno) in wanted]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            yield from pool.map(self.judge_pair, pairs)


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: back off as usual


def _count(value) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
