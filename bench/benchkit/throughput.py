"""Local throughput: how fast the local stack accepts Starts, and schedules them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from chaoskit.stack_process import StackProcess

from benchkit.local_stack import action_count
from benchkit.publish import publish_starts

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
    stack: StackProcess, starts: int, progress: Callable[[str], None]
) -> Throughput:
    """Publish ``starts`` Starts two hours ahead (none fires during the run)."""
    details = [{"id": f"load-{n}", "duration": "2h"} for n in range(starts)]
    before = action_count(stack)
    progress(f"throughput: publishing {starts} Starts")
    began = time.perf_counter()
    accepted = publish_starts(stack, details, progress=progress)
    progress(f"  accepted in {accepted:.1f} s; waiting until all are scheduled")
    last = time.perf_counter()
    while (count := action_count(stack) - before) < starts:
        if time.perf_counter() - last > 15:
            progress(f"  {count}/{starts} scheduled after {time.perf_counter() - began:.0f} s")
            last = time.perf_counter()
        time.sleep(1.0)
    return Throughput(starts, accepted, time.perf_counter() - began)
