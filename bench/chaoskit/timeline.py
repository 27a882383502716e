"""Runs planned fault steps at their moments (epoch seconds), a few at a time."""

from __future__ import annotations

import heapq
import itertools
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

__all__ = ["Timeline"]


class Timeline:
    def __init__(self, workers: int = 64) -> None:
        # Many: steps due while the stack restarts wait for it, holding their worker.
        self._queue: list[tuple[float, int, str, Callable[[], None]]] = []
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="chaos-step")
        self._stopped = False
        self._running = 0
        self.errors: list[str] = []
        self._thread = threading.Thread(target=self._run, name="chaos-timeline", daemon=True)
        self._thread.start()

    def at(self, when: float, label: str, step: Callable[[], None]) -> None:
        with self._changed:
            heapq.heappush(self._queue, (when, next(self._order), label, step))
            self._changed.notify()

    def pending(self) -> int:
        with self._changed:
            return len(self._queue) + self._running

    def close(self) -> None:
        with self._changed:
            self._stopped = True
            self._changed.notify()
        self._thread.join(timeout=5)
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._stopped and (not self._queue or self._queue[0][0] > time.time()):
                    delay = self._queue[0][0] - time.time() if self._queue else None
                    self._changed.wait(delay)
                if self._stopped:
                    return
                _, _, label, step = heapq.heappop(self._queue)
                self._running += 1
            self._pool.submit(self._guarded, label, step)

    def _guarded(self, label: str, step: Callable[[], None]) -> None:
        try:
            step()
        except Exception:
            self.errors.append(f"{label}: {traceback.format_exc(limit=3)}")
        finally:
            with self._changed:
                self._running -= 1
