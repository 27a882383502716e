"""A webhook receiver on loopback that answers 500 to its first ``failures`` requests and
``status`` (200 unless told) to the others, and holds each request ``hold_seconds`` (counting
how many it holds at once: ``max_in_flight``).

For the demo and the tests: a real HTTP endpoint for HTTP_REQUEST fulfillments, so retries
are exercised against a real server rather than a mock.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tickwork_local.http_api import SHUTDOWN_POLL
from tickwork_local.server import LOOPBACK

__all__ = ["Receiver"]


class Receiver:
    def __init__(self, failures: int = 0, hold_seconds: float = 0.0, status: int = 200) -> None:
        self.failures = failures
        self.status = status
        self.hold_seconds = hold_seconds
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver.requests.append({"headers": dict(self.headers), "body": body})
                    failing = receiver.failures > 0
                    if failing:
                        receiver.failures -= 1
                    receiver.in_flight += 1
                    receiver.max_in_flight = max(receiver.max_in_flight, receiver.in_flight)
                if receiver.hold_seconds:
                    threading.Event().wait(receiver.hold_seconds)
                with receiver._lock:
                    receiver.in_flight -= 1
                self.send_response(500 if failing else receiver.status)
                self.end_headers()
                self.wfile.write(b"not yet" if failing else b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
        self.url = f"http://{LOOPBACK}:{self.server.server_address[1]}/hook"
        threading.Thread(
            target=self.server.serve_forever, args=(SHUTDOWN_POLL,), daemon=True
        ).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
