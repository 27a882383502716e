"""Events put on the bus as they come, up to 10 a PutEvents call, by one thread of their own.

A batch task's fires each hand their tick (or failure report) over the moment it is recorded;
the sender sends what it holds at once — a call as soon as 10 are there, or after ``linger``
with fewer — so a fire's tick never waits for a slower fire of the same batch. ``close``
sends the rest and raises the first refusal, if any: the task then fails and is retried,
which puts again the events of its recorded fires that were not noted as sent. ``on_sent``
is told each call's events once the bus took them all (a batch notes them: ``fire_batch``).
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
import time
from collections.abc import Callable
from types import TracebackType

from tickwork.ports import EventPublisher, OutboundEvent

__all__ = ["BusSender"]

_PER_CALL = 10  # PutEvents takes at most 10 entries
log = logging.getLogger("tickwork")


class BusSender:
    def __init__(
        self,
        publisher: EventPublisher,
        linger: float = 0.02,
        on_sent: Callable[[list[OutboundEvent]], None] | None = None,
    ) -> None:
        self._publisher = publisher
        self._linger = linger
        self._on_sent = on_sent
        self._queue: queue.Queue[OutboundEvent | None] = queue.Queue()  # None: no more
        self._error: BaseException | None = None
        self.sent = 0
        self.calls = 0
        context = contextvars.copy_context()  # its calls carry the task's logging and tracing
        self._thread = threading.Thread(
            target=context.run, args=(self._run,), name="bus-sender", daemon=True
        )
        self._thread.start()

    def put(self, event: OutboundEvent) -> None:
        self._queue.put(event)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def __enter__(self) -> BusSender:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None:
            self.close()
            return
        # The task is failing already: send what is there, and let its own error stand.
        self._queue.put(None)
        self._thread.join()

    def _run(self) -> None:
        closing = False
        while not closing:
            first = self._queue.get()
            if first is None:
                return
            chunk = [first]
            until = time.monotonic() + self._linger
            while len(chunk) < _PER_CALL:
                try:
                    item = self._queue.get(timeout=max(0.0, until - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    closing = True
                    break
                chunk.append(item)
            self._send(chunk)

    def _send(self, events: list[OutboundEvent]) -> None:
        try:
            self._publisher.publish_all(events)
        except Exception as error:  # the first refusal fails the task; the rest still go out
            self._error = self._error or error
            return
        self.sent += len(events)
        self.calls += 1
        if self._on_sent is not None:
            try:
                self._on_sent(events)
            except Exception:  # not noted: a retry puts them again (at least once, same key)
                log.warning("events sent but not noted as sent", exc_info=True)
