"""Personal API tokens: a person's key to the HTTP API (``workbench.api.core``), sent as ``Authorization: Bearer ...``.

A token is ``wbt_<prefix>_<secret>``: the prefix (8 hex digits) is kept in clear to find the row and to show
the token on the account page; only the sha256 of the whole token is stored, so the token is shown once, when
it is made, and never again (not on a page, not in a log). A token acts as its user, with the user's roles;
a revoked token is refused. Each token may make ``API_REQUESTS_PER_MINUTE`` requests a minute."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import deque
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

__all__ = ["ApiToken", "TokenRateLimited", "rate_check", "token_create", "token_revoke", "token_user"]

PREFIX = "wbt_"
#: last_used is written at most this often per token (not on every request: a write takes the database's lock)
LAST_USED_EVERY = timedelta(seconds=60)


class ApiToken(models.Model):
    """A person's API token: its name, the prefix that finds it, the sha256 of the whole token."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the token is for, e.g. 'my laptop' or 'submit script'.")
    prefix = models.CharField(max_length=8, unique=True, help_text="Its first characters, shown to tell tokens apart.")
    digest = models.CharField(max_length=64, help_text="sha256 of the token (the token itself is never stored).")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "workbench"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.user} {self.name} ({self.shown})"

    @property
    def shown(self) -> str:
        """The token as the account page shows it: its prefix only."""
        return f"{PREFIX}{self.prefix}_…"

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_create(*, user, name: str = "") -> tuple[ApiToken, str]:
    """A new token for ``user``: (its row, the token, to be shown once)."""
    while True:
        prefix = secrets.token_hex(4)
        if not ApiToken.objects.filter(prefix=prefix).exists():
            break
    token = f"{PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    row = ApiToken.objects.create(user=user, name=(name.strip() or "token")[:100], prefix=prefix,
                                  digest=_digest(token))
    return row, token


def token_revoke(*, user, token_id: int) -> bool:
    """Revoke one of ``user``'s tokens; False when they have no such token (or it was revoked already)."""
    return bool(ApiToken.objects.filter(pk=token_id, user=user, revoked_at=None).update(revoked_at=timezone.now()))


def token_user(token: str):
    """The active user a token belongs to, or None (unknown, revoked, or the user deactivated)."""
    if not isinstance(token, str) or not token.startswith(PREFIX) or len(token) > 200:
        return None
    prefix = token[len(PREFIX):len(PREFIX) + 8]
    row = ApiToken.objects.select_related("user").filter(prefix=prefix, revoked_at=None).first()
    if row is None or not hmac.compare_digest(row.digest, _digest(token)) or not row.user.is_active:
        return None
    now = timezone.now()
    if row.last_used is None or now - row.last_used > LAST_USED_EVERY:
        ApiToken.objects.filter(pk=row.pk).update(last_used=now)
    row.user.api_token_id, row.user.api_token_prefix = row.pk, row.prefix
    return row.user


class TokenRateLimited(Exception):
    """A token made ``API_REQUESTS_PER_MINUTE`` requests in the last minute; ``wait`` is seconds to wait."""

    def __init__(self, limit: int, wait: int) -> None:
        self.limit, self.wait = limit, wait
        super().__init__(f"this token made {limit} requests in the last minute, the most a token may make; "
                         f"try again in {wait} seconds")


_calls: dict[str, deque] = {}
_lock = threading.Lock()


def rate_check(prefix: str, now: float | None = None) -> None:
    """Count one request of the token (by its prefix); refuse (:class:`TokenRateLimited`) one over the limit (per process:
    each server process counts its own requests)."""
    limit = int(getattr(settings, "API_REQUESTS_PER_MINUTE", 0) or 0)
    if limit <= 0:
        return
    now = time.monotonic() if now is None else now
    with _lock:
        calls = _calls.setdefault(prefix, deque())
        while calls and now - calls[0] >= 60:
            calls.popleft()
        if len(calls) >= limit:
            raise TokenRateLimited(limit, max(1, int(60 - (now - calls[0])) + 1))
        calls.append(now)
