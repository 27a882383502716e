"""The local stack as a child process for the benchmarks, and what they read from it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tickwork.domain.events import DetailType
from tickwork_local.process import LocalProcess
from tickwork_local.stack import EventTap as LocalTap

__all__ = ["EventTap", "local_stack"]


@contextmanager
def local_stack(
    state_dir: Path, log_path: Path, parameters: dict[str, str] | None = None
) -> Iterator[LocalProcess]:
    stack = LocalProcess(state_dir, parameters=parameters, log_path=log_path)
    stack.start(fresh=True)
    try:
        yield stack
    finally:
        stack.stop()


class EventTap:
    """Tickwork's events of one detail type, as a worker subscribed to the bus receives them
    (tickwork_local's tap, reached through the stack's port); each is kept once by (id,
    occurrence), or (id, generation) for an event without an occurrence."""

    def __init__(self, stack: LocalProcess, detail_type: str = DetailType.TICK) -> None:
        self._tap = LocalTap.subscribe(
            stack.client("sqs"), stack.client("events"), stack.bus, [detail_type], "tickwork"
        )
        self._read = 0
        self.ticks: dict[tuple[str, int], dict[str, Any]] = {}
        self.repeats = 0

    def drain(self) -> None:
        events = self._tap.drain()
        for event in events[self._read :]:
            detail = event["detail"]
            key = (detail["id"], int(detail.get("occurrence", detail.get("generation", 0))))
            if key in self.ticks:
                self.repeats += 1
            self.ticks.setdefault(key, detail)
        self._read = len(events)

    def wait_for(self, count: int, deadline: float) -> int:
        while len(self.ticks) < count and time.monotonic() < deadline:
            self.drain()
            time.sleep(0.2)
        self.drain()
        return len(self.ticks)
