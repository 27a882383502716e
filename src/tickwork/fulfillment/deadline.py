"""One deadline over a whole network exchange, however slowly the other end answers.

A socket timeout bounds each read on its own: a peer that sends its status line one byte a
second never trips it, and holds the exchange (and the Lambda running it) for as long as it
likes. ``Deadline`` bounds the sum. Each socket opened under it gets the time that remains as
its timeout (so connecting and the TLS handshake stop at the deadline), and a watchdog shuts
the connection down when the deadline passes, which ends whatever read or write is under way
(status line, headers, body, or sending the request). ``expired`` then says why it ended.

The watchdog shuts down a duplicate of the socket's descriptor taken when the socket is
watched: ``shutdown`` acts on the connection, not the descriptor, so it reaches the socket
after TLS has wrapped it, and the duplicate cannot name another socket later, because it stays
open until ``close``.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

__all__ = ["Deadline"]


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._watched: list[socket.socket] = []
        self._finished = False
        self._expired = False
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        """Seconds left (never quite zero: a zero socket timeout would mean non-blocking)."""
        return max(self._at - time.monotonic(), 0.001)

    @property
    def expired(self) -> bool:
        with self._lock:
            return self._expired

    def connection(self, address: tuple[str, int]) -> socket.socket:
        """A socket connected to ``address`` within the time left, watched until ``close``."""
        sock = socket.create_connection(address, self.remaining())
        with self._lock:
            self._watched.append(sock.dup())
            cut = self._expired
        if cut:  # expired while connecting
            self._shut(self._watched[-1])
        return sock

    def close(self) -> None:
        """The exchange is over: stop the watchdog and let go of the watched descriptors."""
        with self._lock:
            self._finished = True
            watched, self._watched = self._watched, []
        self._timer.cancel()
        for sock in watched:
            sock.close()

    def _cut(self) -> None:
        with self._lock:
            if self._finished:
                return
            self._expired = True
            watched = list(self._watched)
        for sock in watched:
            self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):  # already closed, by us or the other end
            sock.shutdown(socket.SHUT_RDWR)
