"""Local throughput: how fast the local stack accepts Starts, and schedules them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from benchkit.local_stack import EventTap
from benchkit.publish import publish_starts
from tickwork.domain.events import DetailType
from tickwork_local.process import LocalProcess

__all__ = ["Throughput", "measure_throughput"]


@dataclass(frozen=True)
class Throughput:
    starts: int
    accept_seconds: float  # until the bus had acknowledged every Start
    schedule_seconds: float  # until every action was recorded with its execution started

    @property
    def accepted_per_second(self) -> float:
        return self.starts / self.accept_seconds

    @property
    def scheduled_per_second(self) -> float:
        return self.starts / self.schedule_seconds


def measure_throughput(
    stack: LocalProcess, starts: int, progress: Callable[[str], None]
) -> Throughput:
    """Publish ``starts`` Starts two hours ahead (none fires during the run). An action is
    scheduled when its "Schedule Started" event is out: record written, execution started."""
    details = [{"id": f"load-{n}", "duration": "2h"} for n in range(starts)]
    started = EventTap(stack, DetailType.STARTED)  # counting by events: no table scans
    progress(f"throughput: publishing {starts} Starts")
    began = time.perf_counter()
    accepted = publish_starts(stack, details, progress=progress)
    progress(f"  accepted in {accepted:.1f} s; waiting until all are scheduled")
    last = time.perf_counter()
    while len(started.ticks) < starts:
        if time.perf_counter() - last > 15:
            done = len(started.ticks)
            progress(f"  {done}/{starts} scheduled after {time.perf_counter() - began:.0f} s")
            last = time.perf_counter()
        started.drain()
        time.sleep(0.5)
    return Throughput(starts, accepted, time.perf_counter() - began)
