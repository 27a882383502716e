"""Dependencies for a unit test, built through ``tickwork.bootstrap.build`` like every other
caller, each port a fake that holds state for the test to assert on."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tests.unit.fakes.aws import (
    FakeExecutions,
    FakePublisher,
    FakeSecrets,
    FakeSignatures,
    NoTargets,
)
from tests.unit.fakes.stores import (
    FakeCalendars,
    FakeCountTabs,
    FakeFireTallies,
    FakeParkedFires,
    FakeQueries,
    FakeRecords,
    FakeRejections,
    FakeStore,
)
from tickwork import bootstrap
from tickwork.config import MAX_LAUNCH_AHEAD, Settings
from tickwork.dependencies import Dependencies
from tickwork.domain.fire import FireAttempt, FireOrder
from tickwork.domain.naming import execution_name
from tickwork.domain.times import parse_iso
from tickwork.fulfillment.notifier import LoggingNotifier
from tickwork.ports.notifier import Notifier

__all__ = ["FakeClock", "attempt", "fake_dependencies"]


@dataclass
class FakeClock:
    """Time that moves only when a test moves it, or a sleep does. A batch's members sleep in
    threads of their own: each move is made under a lock, so two sleeps never overwrite each
    other's (time never goes back, however the threads interleave on a busy machine)."""

    current: datetime
    slept: list[float] = field(default_factory=list)
    _moving: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def now(self) -> datetime:
        return self.current

    def sleep(self, seconds: float) -> None:
        with self._moving:
            self.slept.append(seconds)
            self.current += timedelta(seconds=seconds)

    def advance(self, **delta: float) -> None:
        with self._moving:
            self.current += timedelta(**delta)


def fake_dependencies(
    now: datetime,
    notifier: Notifier | None = None,
    publisher: FakePublisher | None = None,
    **settings: Any,
) -> Dependencies:
    # Every fire launches at once unless a test sets a horizon (parking has tests of its own).
    settings.setdefault("launch_ahead", MAX_LAUNCH_AHEAD)
    store = FakeStore()
    return bootstrap.build(
        Settings(table_name="t", event_bus_name="b", state_machine_arn="arn:sm", **settings),
        records=FakeRecords(store),
        queries=FakeQueries(store),
        parked=FakeParkedFires(store),
        tallies=FakeFireTallies(store),
        tabs=FakeCountTabs(store),
        executions=FakeExecutions(),
        batches=FakeExecutions(machine="batch"),
        publisher=publisher or FakePublisher(),
        clock=FakeClock(now),
        secrets=FakeSecrets(),
        signatures=FakeSignatures(),
        notifier=notifier or LoggingNotifier(),
        targets=NoTargets(),
        rejections=FakeRejections(),
        calendars=FakeCalendars(),
    )


def attempt(
    action_id: str,
    occurrence: int,
    fire_at: str,
    name: str | None = None,
    retry: int = 0,
    leg: int = 0,
    generation: int = 1,
    repair: int = 0,
) -> FireAttempt:
    """What the Fulfill task would invoke the fulfill step with for this fire."""
    due = parse_iso(fire_at)
    order = FireOrder(action_id, generation, occurrence, due, due, leg, repair)
    name = name or execution_name(action_id, generation, occurrence, leg, repair, key=None)
    return FireAttempt(order, FakeExecutions().execution_arn(name), retry)
