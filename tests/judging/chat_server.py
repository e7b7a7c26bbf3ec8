"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for the tests (POST /v1/chat/completions).

What it answers depends on a marker in the prompt, ``CASE:<name>``: ``well`` (a score), ``offscale`` (a score
not on the scale), ``malformed`` (not JSON), ``truncated`` (cut off, finish_reason length), ``cutjson`` (the
body stops half way), ``refuse`` (HTTP 400), ``ratelimit`` (429 with Retry-After once, then a score),
``flaky`` (503 once, then a score), ``slow`` (a score after 0.2 s), ``vote`` (1, 2, 1, ... in turn), ``stall`` (no answer before the client's timeout) and ``drop`` (closes
the connection without a word). It counts the requests per case and keeps the last request's headers.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STALL_SECONDS = 1.5


class ChatServer:
    def __init__(self) -> None:
        self.requests: Counter = Counter()
        self.bodies: list[dict] = []
        self.headers: dict = {}
        self.in_flight = self.most_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                prompt = body["messages"][-1]["content"]
                case = (re.search(r"CASE:(\w+)", prompt) or [None, "well"])[1]
                with server.lock:
                    server.requests[case] += 1
                    server.bodies.append(body)
                    server.headers = dict(self.headers)
                    seen = server.requests[case]
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                self.counted = True
                try:
                    server.answer(self, case, seen)
                finally:
                    server.done(self)

        class Server(ThreadingHTTPServer):
            daemon_threads = False  # server_close() waits for every answer (a stalled one too)

            def handle_error(self, request, client_address) -> None:  # a client that gave up: expected here
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def done(self, handler) -> None:
        """The request no longer counts as in flight (once, before its answer goes out where it matters: a
        client may send its next request as soon as it has read this one's answer)."""
        with self.lock:
            if handler.counted:
                handler.counted = False
                self.in_flight -= 1

    @staticmethod
    def _send(handler, status: int, payload: bytes, headers: dict | None = None, length: int | None = None) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload) if length is None else length))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(payload)
        handler.wfile.flush()

    @staticmethod
    def completion(content: str, finish: str = "stop") -> bytes:
        return json.dumps({"id": "c1", "object": "chat.completion", "model": "tiny",
                           "choices": [{"index": 0, "finish_reason": finish,
                                        "message": {"role": "assistant", "content": content}}],
                           "usage": {"prompt_tokens": 120, "completion_tokens": 6, "total_tokens": 126}}).encode()

    def answer(self, handler, case: str, seen: int) -> None:
        if case == "well":
            self._send(handler, 200, self.completion("M: 2, T: 2\n##final score: 2"))
        elif case == "offscale":
            self._send(handler, 200, self.completion("##final score: 7"))
        elif case == "malformed":
            self._send(handler, 200, b"<html>upstream error</html>")
        elif case == "truncated":
            self._send(handler, 200, self.completion("Let me think about the intent of the", finish="length"))
        elif case == "cutjson":
            whole = self.completion("##final score: 1")
            self._send(handler, 200, whole[: len(whole) // 2], length=len(whole))
            handler.close_connection = True
        elif case == "refuse":
            self._send(handler, 400, json.dumps({"error": {"message": "content policy"}}).encode())
        elif case == "ratelimit" and seen == 1:
            self._send(handler, 429, b'{"error": {"message": "slow down"}}', {"Retry-After": "0.4"})
        elif case == "flaky" and seen == 1:
            self._send(handler, 503, b'{"error": {"message": "overloaded"}}')
        elif case in ("ratelimit", "flaky"):
            self._send(handler, 200, self.completion("##final score: 1"))
        elif case == "slow":
            time.sleep(0.2)
            self.done(handler)
            self._send(handler, 200, self.completion("##final score: 3"))
        elif case == "vote":  # three samples answer 1, 2, 1
            self._send(handler, 200, self.completion(f"##final score: {2 if seen % 3 == 2 else 1}"))
        elif case == "stall":
            time.sleep(STALL_SECONDS)
            self._send(handler, 200, self.completion("##final score: 1"))
        elif case == "drop":
            handler.close_connection = True
            handler.connection.close()
