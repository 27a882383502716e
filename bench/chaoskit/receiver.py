"""The webhook every chaos action calls: records each delivery and answers per the fault plan.

It lives in the driver's process, outside the local stack, so it sees every fire across a
kill -9 of the stack. Answers are decided by the action id's prefix:

- ``transient-*``: 503 for the first ``failures_of(id)`` attempts of each occurrence, then 200;
- ``permanent-*`` and ``reportlost-*``: 400 (a permanent failure: not retried, the action ends
  FAILED);
- anything else: 200.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChaosReceiver", "Delivery"]

LOOPBACK = "127.0.0.1"
TRANSIENT_STATUS = 503
PERMANENT_STATUS = 400


@dataclass(frozen=True)
class Delivery:
    action_id: str
    occurrence: int
    version: int  # the "v" of the body: 2 once an update race changed the data
    received: float  # epoch seconds, this host's clock
    status: int  # what the receiver answered

    @property
    def terminal(self) -> bool:
        """A delivery that ends the fire: a success, or a refusal that is not retried."""
        return self.status != TRANSIENT_STATUS


class ChaosReceiver:
    def __init__(self, failures_of: Callable[[str], int]) -> None:
        self._failures_of = failures_of
        self._lock = threading.Lock()
        self._attempts: dict[tuple[str, int, int], int] = defaultdict(int)
        self.deliveries: list[Delivery] = []
        self.server = ThreadingHTTPServer((LOOPBACK, 0), self._handler_class())
        self.server.daemon_threads = True
        self.url = f"http://{LOOPBACK}:{self.server.server_address[1]}/hook"
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="chaos-receiver", daemon=True
        )

    def __enter__(self) -> ChaosReceiver:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def snapshot(self) -> list[Delivery]:
        with self._lock:
            return list(self.deliveries)

    def last_received(self) -> float:
        with self._lock:
            return self.deliveries[-1].received if self.deliveries else 0.0

    def answer(self, action_id: str, occurrence: int, version: int) -> int:
        """Record one request and decide its status."""
        received = time.time()
        with self._lock:
            key = (action_id, version, occurrence)
            self._attempts[key] += 1
            status = self._status(action_id, self._attempts[key])
            self.deliveries.append(Delivery(action_id, occurrence, version, received, status))
        return status

    def _status(self, action_id: str, attempt: int) -> int:
        if action_id.startswith(("permanent-", "reportlost-")):
            return PERMANENT_STATUS
        if action_id.startswith("transient-") and attempt <= self._failures_of(action_id):
            return TRANSIENT_STATUS
        return 200

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = _json(raw)
                status = receiver.answer(
                    self.headers.get("X-Tickwork-Action-Id", str(body.get("id", "?"))),
                    int(self.headers.get("X-Tickwork-Occurrence", "0")),
                    int(body.get("v", 0)),
                )
                payload = b"ok" if status == 200 else b"chaos says no"
                self.send_response(status)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def _json(raw: bytes) -> dict[str, Any]:
    try:
        parsed = json.loads(raw or b"{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
