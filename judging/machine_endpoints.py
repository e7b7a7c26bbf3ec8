"""Where a machine judge's requests go: the chat endpoints the deployment declares (``JUDGE_ENDPOINTS``, chosen by
name on the web) or a base URL given on the server's command line, and the deployment's limits on a request
(``JUDGE_REQUEST_DEADLINE``, ``JUDGE_REPLY_MAX_BYTES``). A judge's stored configuration never holds a key: a
declared endpoint's key is read from the variable it names when the job runs, and goes to that endpoint only."""

from __future__ import annotations

import os

from django.conf import settings

from judging.machine import judge_class
from judging.machine.base import JudgeError, Scale

__all__ = ["BASE_URL_FROM", "endpoint_choices", "given_config", "judge_instance", "merged_config"]

#: the mark of a base URL given through :func:`given_config` (the command line), not stored by an older web form
BASE_URL_FROM = "command line"
#: seconds a running chat judge waits for a verdict before it says it is alive (the job's progress, its heartbeat)
TICK = 5.0
#: configuration keys never stored: a key comes from the environment when the job runs
_SECRET_WORDS = ("key", "token", "secret", "password")
#: what a new option replaces in a stored configuration
_REPLACES = {"endpoint": ("base_url", "base_url_from"), "base_url": ("endpoint",)}


def endpoint_choices() -> dict[str, list[str]]:
    """The chat endpoints the deployment declares (``JUDGE_ENDPOINTS``): name -> its models."""
    return {name: list(entry["models"]) for name, entry in (getattr(settings, "JUDGE_ENDPOINTS", None) or {}).items()}


def given_config(config: dict | None) -> dict:
    """Options as given (empty ones dropped; a ``base_url`` marked as given here, by whoever runs the command on
    the server: the web offers none). Anything that looks like a key is refused, never stored."""
    config = {k: v for k, v in (config or {}).items() if v not in (None, "")}
    if "base_url" in config:
        config["base_url_from"] = BASE_URL_FROM
    secret = [k for k in config if any(word in k.lower() for word in _SECRET_WORDS)]
    if secret:
        raise JudgeError(f"option {secret[0]!r} looks like a secret: give the key in the environment, never as an "
                         f"option")
    return config


def merged_config(stored: dict, given: dict) -> dict:
    """The stored options with the given ones over them (an ``endpoint`` replaces a ``base_url`` and the other way
    round)."""
    kept = {k: v for k, v in stored.items() if not any(k in _REPLACES.get(n, ()) for n in given)}
    return {**kept, **given}


def _runtime(config: dict) -> tuple[dict, str | None]:
    """A chat judge's stored configuration as it runs: a declared ``endpoint`` gives the base URL and the key (from
    the variable it names, none otherwise); a ``base_url`` given on the server's command line keeps
    ``OPENAI_API_KEY``. The deployment's limits apply to both. Returns (configuration, key)."""
    config = {**config, "deadline": settings.JUDGE_REQUEST_DEADLINE, "max_reply_bytes": settings.JUDGE_REPLY_MAX_BYTES,
              "tick": TICK}
    name = config.pop("endpoint", None)
    if name is None:
        if config.pop("base_url_from", None) != BASE_URL_FROM:  # stored by the web form before endpoints were declared
            raise JudgeError("this judge's base URL was not given on the server's command line: choose one of the "
                             "deployment's endpoints (JUDGE_ENDPOINTS), or give --base-url to manage.py machine_judge")
        return config, None
    declared = (getattr(settings, "JUDGE_ENDPOINTS", None) or {}).get(name)
    if declared is None:
        raise JudgeError(f"endpoint {name!r} is not one this deployment declares (JUDGE_ENDPOINTS)")
    if config.get("model") not in declared["models"]:
        raise JudgeError(f"endpoint {name!r} serves {', '.join(declared['models'])}, not {config.get('model')!r}")
    key = os.environ.get(declared["key_env"], "") if declared["key_env"] else ""
    return {**config, "base_url": declared["base_url"]}, key


def judge_instance(kind: str, config: dict, scale: Scale):
    """The judge of ``kind`` with a stored ``config``, ready to run (a chat judge's endpoint resolved)."""
    if "endpoint" in config or "base_url" in config:
        runtime, key = _runtime(config)
        return judge_class(kind)(runtime, scale=scale, key=key)
    return judge_class(kind)(config, scale=scale)
