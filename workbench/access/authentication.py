"""Login throttling glue for django-axes: which backend counts attempts, and where a client comes from."""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.http import HttpRequest


class LoginThrottleBackend(AxesStandaloneBackend):
    """axes' lock-out for every login made through a web request (the login page, the admin).

    A call to ``authenticate()`` without a request (a script, a shell session, a test) has no client to
    count attempts for, so it goes on to the next backend instead of failing."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


def client_ip_address(request: HttpRequest) -> str | None:
    """The client's address: from the ``CLIENT_IP_HEADER`` a reverse proxy sets, if one is configured, else
    the connection's. Of a list (``X-Forwarded-For: a, b``) the last address counts: the one the proxy
    added, which a client cannot forge."""
    header = settings.CLIENT_IP_HEADER.strip()
    if header:
        forwarded = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        nearest = forwarded.split(",")[-1].strip()
        if nearest:
            return nearest
    return request.META.get("REMOTE_ADDR")
