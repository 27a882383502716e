"""Fire accuracy on the local stack: N TICK actions due within a window; how late each fired.

Lateness is the tick's ``lateMs``: when the fulfillment ran, by the stack's clock, minus the
scheduled time. A negative value would be an early fire. Fire times are placed ``lead``
seconds ahead, so every action is created and waiting before its time comes.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from benchkit.local_stack import EventTap
from benchkit.publish import publish_starts
from benchkit.stats import percentile
from tickwork.domain.events import DetailType
from tickwork.domain.times import iso
from tickwork_local.process import LocalProcess

__all__ = ["Accuracy", "measure_accuracy"]


@dataclass
class Accuracy:
    name: str
    actions: int
    window_seconds: float
    lateness_ms: list[int] = field(default_factory=list)
    created_seconds: float = 0.0
    created_after_due: int = 0
    repeats: int = 0

    @property
    def early(self) -> int:
        return sum(1 for late in self.lateness_ms if late < 0)

    @property
    def missing(self) -> int:
        return self.actions - len(self.lateness_ms)

    def pct(self, p: float) -> float:
        return percentile(self.lateness_ms, p) / 1000


def measure_accuracy(
    stack: LocalProcess,
    name: str,
    actions: int,
    window_seconds: float,
    lead_seconds: float,
    progress: Callable[[str], None],
    seed: int = 7,
) -> Accuracy:
    rng = random.Random(seed)
    tap = EventTap(stack)
    result = Accuracy(name, actions, window_seconds)
    first_due = datetime.now(UTC) + timedelta(seconds=lead_seconds)
    dues = sorted(
        first_due + timedelta(seconds=rng.uniform(0, window_seconds)) for _ in range(actions)
    )
    # An action id takes letters, digits and ": _ - . @ + =" only: a run's name ("burst, no
    # batches") is not one, and every Start named for it was rejected.
    prefix = f"acc-{re.sub(r'[^A-Za-z0-9]+', '-', name)}-{rng.randrange(10**6)}"
    details = [{"id": f"{prefix}-{n}", "at": iso(due)} for n, due in enumerate(dues)]
    started = EventTap(stack, DetailType.STARTED)  # counting by events: no table scans
    began = time.monotonic()
    progress(
        f"accuracy {name}: {actions} actions due from {lead_seconds:.0f} s on, "
        f"within {window_seconds:.0f} s"
    )
    publish_starts(stack, details)
    while len(started.ticks) < actions and time.monotonic() - began < lead_seconds * 2:
        started.drain()
        time.sleep(0.5)
    result.created_seconds = time.monotonic() - began
    created_at = datetime.now(UTC)
    result.created_after_due = sum(1 for due in dues if due < created_at)
    if len(started.ticks) < actions:  # rejected Starts (Schedule Rejected) never fire
        progress(f"  only {len(started.ticks)} of {actions} actions were created")
    progress(f"  created in {result.created_seconds:.1f} s; waiting for the fires")
    deadline = time.monotonic() + lead_seconds + window_seconds + 60
    tap.wait_for(actions, deadline)
    result.lateness_ms = [int(tick["lateMs"]) for tick in tap.ticks.values()]
    result.repeats = tap.repeats
    return result
