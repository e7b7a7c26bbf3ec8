"""One POST to a chat endpoint, bounded: the key goes to the endpoint's own host and nowhere else, the reply is
read up to a size limit, and the whole request (connect, send, read) ends at a deadline. Django-free; stdlib
``http.client``, which never follows a redirect: a 3xx is answered as a failure naming where it pointed.

The URL is built from the endpoint's base URL (scheme, host, port and path only: a base URL with a query, a
fragment or user info is refused by :func:`checked_base_url`) and a fixed path, so nothing in a base URL can send
the request (or the key) to another path or host.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from urllib.parse import urlsplit

__all__ = ["Answer", "Expired", "TooLarge", "checked_base_url", "post"]

#: bytes read of an error reply (only its first words are shown)
ERROR_BODY_BYTES = 4096
CHUNK = 65536


class TooLarge(Exception):
    """The reply is longer than the limit: refused, never read whole."""


class Expired(Exception):
    """No complete reply before the deadline (a slow or dripping endpoint)."""


class Answer:
    """A reply: its status, headers and body (the body of an error is cut to ``ERROR_BODY_BYTES``); for a
    redirect, the host (host:port) it pointed to."""

    def __init__(self, status: int, headers, body: bytes, redirect_to: str = "") -> None:
        self.status, self.headers, self.body, self.redirect_to = status, headers, body, redirect_to


def checked_base_url(url: str) -> str:
    """``url`` without a trailing slash if it is a plain http(s) URL with a host (no user info, query or
    fragment); ValueError saying why otherwise."""
    url = (url or "").strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ValueError(f"{url!r} is not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be an http(s) URL such as http://127.0.0.1:8000/v1, not {url!r}")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValueError("must not carry a user name or password (the key comes from the environment)")
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise ValueError("must not have a query or a fragment ('?' or '#'): the path /chat/completions is added to it")
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise ValueError("must not contain spaces or control characters")
    return url.rstrip("/")


def _where(location: str | None, base) -> str:
    """The host a redirect points to (host:port), or what it says when it names none."""
    target = urlsplit((location or "").strip())
    host = target.hostname or base.hostname or "?"
    try:
        port = target.port if target.hostname else base.port
    except ValueError:
        port = None
    return (f"{host}:{port}" if port else host)[:100]


def post(base_url: str, path: str, data: bytes, headers: dict, *, timeout: float, deadline: float,
         max_bytes: int) -> Answer:
    """POST ``data`` to ``base_url`` + ``path``. A reply of a 2xx status is read whole up to ``max_bytes``
    (:class:`TooLarge` past it); an error's body is cut short; a 3xx is returned as is (its body unread).
    ``timeout`` bounds each wait for the socket, ``deadline`` (seconds) the whole request (:class:`Expired`).
    Other failures raise ``OSError`` or ``http.client.HTTPException`` as the standard library does."""
    base = urlsplit(checked_base_url(base_url))
    started = time.monotonic()
    connection_class = http.client.HTTPSConnection if base.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(base.hostname, base.port, timeout=max(0.05, min(timeout, deadline)))
    expired = threading.Event()

    def cut() -> None:  # the deadline passed: whatever the socket is waiting for ends now
        expired.set()
        sock = connection.sock
        if sock is not None:
            try:
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(deadline, cut)
    timer.daemon = True
    timer.start()
    try:
        connection.request("POST", base.path.rstrip("/") + path, body=data, headers=headers)
        response = connection.getresponse()
        limit = max_bytes if 200 <= response.status < 300 else ERROR_BODY_BYTES
        body = b"" if 300 <= response.status < 400 else _read(response, limit, response.status < 300)
        if expired.is_set():
            raise Expired
        if 300 <= response.status < 400:
            return Answer(response.status, response.headers, b"", _where(response.headers.get("Location"), base))
        return Answer(response.status, response.headers, body)
    except (OSError, http.client.HTTPException, ValueError):
        if expired.is_set() or time.monotonic() - started >= deadline:
            raise Expired from None
        raise
    finally:
        timer.cancel()
        connection.close()


def _read(response, limit: int, whole: bool) -> bytes:
    """At most ``limit`` bytes of the body; past it :class:`TooLarge` if the reply must be ``whole``, else what
    was read (an error's first words)."""
    declared = response.getheader("Content-Length")
    if whole and declared and declared.strip().isdigit() and int(declared) > limit:
        raise TooLarge(int(declared))
    chunks, size = [], 0
    while size <= limit:
        chunk = response.read(min(CHUNK, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        if whole:
            raise TooLarge(size)
        return b"".join(chunks)[:limit]
    return b"".join(chunks)
