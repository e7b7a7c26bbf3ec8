"""The machine judges' chat endpoints a deployment declares (``JUDGE_ENDPOINTS``) and the limits of a request to
them, read from the environment by ``workbench.settings``: a bad value stops the start with one line naming it.

``JUDGE_ENDPOINTS`` is a JSON object, endpoint name -> ``{"base_url": "http(s)://host[:port][/path]",
"models": ["model", ...], "key_env": "VARIABLE"}``; ``key_env`` (optional) names the environment variable that
holds the endpoint's key, sent to that endpoint alone (without it no key is sent). Example::

    JUDGE_ENDPOINTS='{"local": {"base_url": "http://127.0.0.1:8000/v1", "models": ["qwen2.5-7b"]},
                      "openai": {"base_url": "https://api.openai.com/v1", "models": ["gpt-4o-mini"],
                                 "key_env": "OPENAI_API_KEY"}}'
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

__all__ = ["judge_endpoints", "positive"]

_FIELDS = {"base_url", "models", "key_env"}


def _plain_url(url) -> bool:
    """An http(s) URL with a host and a valid port, without user info, query, fragment or spaces."""
    if not isinstance(url, str) or re.search(r"[?#@\s]", url):
        return False
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _problem(name: str, entry) -> str:
    """What is wrong with one declared endpoint ("" when nothing)."""
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]{0,63}", name):
        return "its name may hold letters, digits, '.', '_' and '-' only (64 at most)"
    if not isinstance(entry, dict):
        return "it must be an object with base_url, models and (optionally) key_env"
    if set(entry) - _FIELDS:
        return f"unknown fields {sorted(set(entry) - _FIELDS)} (base_url, models, key_env)"
    if not _plain_url(entry.get("base_url")):
        return (f"base_url must be http(s)://host[:port][/path], without user, query or fragment, "
                f"not {entry.get('base_url')!r}")
    models = entry.get("models")
    if not isinstance(models, list) or not models or not all(isinstance(m, str) and m.strip() for m in models):
        return "models must be a non-empty list of the model names it serves"
    key_env = entry.get("key_env", "")
    if not isinstance(key_env, str) or not re.fullmatch(r"([A-Za-z_]\w*)?", key_env):
        return f"key_env must be the name of an environment variable, not {key_env!r}"
    return ""


def judge_endpoints(setting: str, raw: str | None) -> dict[str, dict]:
    """The declared endpoints, name -> {"base_url" (no trailing slash), "models", "key_env"}; {} when unset."""
    try:
        declared = json.loads(raw or "{}")
    except ValueError as exc:
        raise ImproperlyConfigured(f"{setting} is not JSON: {exc}") from None
    if not isinstance(declared, dict):
        raise ImproperlyConfigured(f"{setting} must be a JSON object: endpoint name -> base_url, models, key_env")
    for name, entry in declared.items():
        problem = _problem(name, entry)
        if problem:
            raise ImproperlyConfigured(f"{setting}: endpoint {name!r}: {problem}")
    return {name: {"base_url": entry["base_url"].rstrip("/"), "models": [m.strip() for m in entry["models"]],
                   "key_env": entry.get("key_env", "")} for name, entry in declared.items()}


def positive(setting: str, raw: str | None, default: float) -> float:
    """A number above 0 (``default`` when unset)."""
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{setting}={raw!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise ImproperlyConfigured(f"{setting}={raw!r} must be a number above 0")
    return value
