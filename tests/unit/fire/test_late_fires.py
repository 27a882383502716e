"""GIVEN an action WHEN a fire runs later than its misfireThreshold after its time (an outage,
a backlog) THEN a Schedule Late says so once, with how late and the threshold; a fire on time
or within the threshold, a skipped one and the tick delivered again announce nothing more."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.dependencies import Dependencies
from tickwork.domain.events import DetailType
from tickwork.fire.record import record_tick
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)


def _deps(**detail: object) -> Dependencies:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "h", "rate": "rate(1 hour)", **detail}), deps)
    return deps


def _fire_late_by(deps: Dependencies, late: timedelta):  # type: ignore[no-untyped-def]
    action = deps.records.get("h")
    assert action is not None and action.execution_time is not None
    deps.clock.current = action.execution_time + late  # type: ignore[attr-defined]
    return machine.run(deps, machine.current(deps, "h"))


@pytest.mark.parametrize(
    ("threshold", "late", "announced"),
    [
        (None, timedelta(seconds=0), False),
        (None, timedelta(seconds=59), False),
        (None, timedelta(minutes=5), True),  # past the default 60 s: ONCE runs it, late
        ("10m", timedelta(minutes=5), False),
        ("10s", timedelta(seconds=11), True),
    ],
)
def test_a_fire_later_than_its_threshold_is_announced_late_once(
    threshold: str | None, late: timedelta, announced: bool
) -> None:
    deps = _deps(**({"misfireThreshold": threshold} if threshold else {}))
    tick = _fire_late_by(deps, late)
    assert tick is not None and tick.outcome.value == "FIRED"
    events = deps.publisher.of_type(DetailType.LATE)
    if not announced:
        assert events == []
        return
    (event,) = events
    assert event["id"] == "h" and event["occurrence"] == 1
    assert event["lateMs"] == tick.late_ms and event["lateMs"] > event["thresholdMs"]
    assert event["thresholdMs"] == (10_000 if threshold == "10s" else 60_000)
    record_tick(tick, deps)  # the same tick delivered again: recorded once, announced once
    assert len(deps.publisher.of_type(DetailType.LATE)) == 1


def test_a_missed_fire_the_policy_skips_is_skipped_not_late() -> None:
    deps = _deps(catchUp="SKIP")
    assert _fire_late_by(deps, timedelta(minutes=5)) is None  # skipped: the execution ends
    assert deps.publisher.of_type(DetailType.LATE) == []
    assert len(deps.publisher.of_type(DetailType.SKIPPED)) == 1
