"""A real chat-completions endpoint on 127.0.0.1 for the trust-boundary tests, recording the method, path and
``Authorization`` header of every request it gets (whatever its method), and answering in one way:

``well`` (a score), ``redirect`` (``status`` to ``location``), ``huge`` (``size`` bytes streamed a MiB at a time,
never built in memory, with or without a Content-Length), ``drip`` (a byte every ``interval`` seconds),
``slow`` (a score after ``interval`` seconds) and ``refuse`` (HTTP 400 with ``body``).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MIB = 1 << 20


def completion(content: str) -> bytes:
    return json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}],
                       "usage": {"prompt_tokens": 100, "completion_tokens": 5}}).encode()


class Stub:
    def __init__(self, mode: str = "well", *, status: int = 302, location: str = "", size: int = 1 << 30,
                 length: bool = True, interval: float = 0.5, body: bytes = b"") -> None:
        self.mode, self.status, self.location, self.size, self.length = mode, status, location, size, length
        self.interval, self.body = interval, body
        self.seen: list[dict] = []
        self.sent = 0
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    prompt = json.loads(raw)["messages"][-1]["content"]
                except (ValueError, KeyError, IndexError, TypeError):
                    prompt = None
                with stub.lock:
                    stub.seen.append({"method": self.command, "path": self.path, "prompt": prompt,
                                      "authorization": self.headers.get("Authorization")})
                try:
                    stub.answer(self)
                except OSError:  # the client gave up (as it should on a huge or dripping reply)
                    self.close_connection = True

            do_POST = do_GET = do_PUT = _any  # noqa: N815 - http.server's names

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.httpd.server_address[1]}"
        self.url = f"http://{self.host}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Stub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def keys(self) -> list:
        """The Authorization header of every request received (None where there was none)."""
        return [s["authorization"] for s in self.seen]

    def answer(self, handler) -> None:
        if self.mode == "slow":
            time.sleep(self.interval)
        if self.mode in ("well", "slow"):
            payload = completion("##final score: 2")
            self._head(handler, 200, len(payload))
            handler.wfile.write(payload)
        elif self.mode == "redirect":
            handler.send_response(self.status)
            handler.send_header("Location", self.location)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        elif self.mode == "refuse":
            self._head(handler, 400, len(self.body))
            handler.wfile.write(self.body)
        elif self.mode == "huge":
            self._huge(handler)
        elif self.mode == "drip":
            payload = completion("##final score: 1")
            self._head(handler, 200, len(payload))
            for i in range(len(payload)):
                handler.wfile.write(payload[i:i + 1])
                handler.wfile.flush()
                time.sleep(self.interval)

    def _head(self, handler, status: int, length: int | None) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        if length is not None:
            handler.send_header("Content-Length", str(length))
        else:
            handler.send_header("Connection", "close")
            handler.close_connection = True
        handler.end_headers()

    def _huge(self, handler) -> None:
        self._head(handler, 200, self.size if self.length else None)
        chunk = b" " * MIB
        while self.sent < self.size:
            handler.wfile.write(chunk)
            with self.lock:
                self.sent += len(chunk)
