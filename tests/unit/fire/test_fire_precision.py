"""GIVEN a lone fire at a fraction of a second, FirePrecision second or millisecond WHEN its
execution wakes as planned (the whole second at or after it, or its second and then its sleep)
and its task starts a little later THEN it fires, never early — and, under a misfireThreshold as
short as 1 s, the planned rounding is not taken for lateness: it is neither skipped as missed
(catchUp SKIP) nor announced Late."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.domain.events import DetailType
from tickwork.domain.fire import Outcome
from tickwork.domain.times import iso
from tickwork.fire.record import record_tick
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("precision", ["second", "millisecond"])
@given(
    ms=st.sampled_from([1, 100, 500, 999]) | st.integers(1, 999),
    latency=st.integers(0, 400),
)
@settings(max_examples=25, deadline=None)
def test_a_fire_woken_as_planned_is_neither_missed_nor_late_under_a_1s_threshold(
    precision: str, ms: int, latency: int
) -> None:
    deps = fake_dependencies(NOW, launch_ahead=timedelta(minutes=15), fire_precision=precision)
    fire_at = NOW + timedelta(minutes=5, milliseconds=ms)
    detail = {"id": "s", "at": iso(fire_at), "catchUp": "SKIP", "misfireThreshold": "1s"}
    start_action(StartCommand(detail, "e"), deps)
    name = machine.current(deps, "s")
    order = deps.executions.started[name]
    assert order.wait_until >= fire_at if precision == "second" else order.wait_until == fire_at

    # the Wait ends as planned (Step Functions: on its whole second), the task a little later
    deps.clock.current = order.wait_until.replace(microsecond=0) + timedelta(milliseconds=latency)
    tick = machine.run(deps, name)

    assert tick is not None and tick.outcome is Outcome.FIRED
    assert tick.actual_time >= fire_at  # never early: the millisecond slept off if need be
    record_tick(tick, deps)
    events = [t for t, _ in deps.publisher.events]
    assert str(DetailType.LATE) not in events
    assert deps.records.items["s"].history[-1].outcome is Outcome.FIRED


def test_a_fire_past_its_threshold_beyond_the_rounding_is_still_missed() -> None:
    deps = fake_dependencies(NOW, launch_ahead=timedelta(minutes=15))
    fire_at = NOW + timedelta(minutes=5, milliseconds=100)
    detail = {"id": "s", "at": iso(fire_at), "catchUp": "SKIP", "misfireThreshold": "1s"}
    start_action(StartCommand(detail, "e"), deps)
    name = machine.current(deps, "s")
    # woken at the planned whole second, the task 1.2 s later: past the threshold after it
    deps.clock.current = deps.executions.started[name].wait_until + timedelta(seconds=1.2)

    assert machine.run(deps, name) is None  # skipped as missed (catchUp SKIP)
    assert deps.records.items["s"].history[-1].outcome is Outcome.SKIPPED


def test_the_fire_totals_count_a_fire_woken_at_its_whole_second_on_time() -> None:
    deps = fake_dependencies(NOW, launch_ahead=timedelta(minutes=15))
    fire_at = NOW + timedelta(minutes=5, milliseconds=100)
    start_action(StartCommand({"id": "s", "at": iso(fire_at)}, "e"), deps)
    name = machine.current(deps, "s")
    deps.clock.current = deps.executions.started[name].wait_until + timedelta(milliseconds=200)
    tick = machine.run(deps, name)
    assert tick is not None and tick.late_ms == 1100
    record_tick(tick, deps)
    minute = int(fire_at.timestamp()) // 60
    assert deps.tallies.read("default", False, minute, minute)[minute] == {"onTime": 1}
    # and one woken more than a second after that whole second counts late
    deps2 = fake_dependencies(NOW, launch_ahead=timedelta(minutes=15))
    start_action(StartCommand({"id": "s", "at": iso(fire_at)}, "e"), deps2)
    name = machine.current(deps2, "s")
    deps2.clock.current = deps2.executions.started[name].wait_until + timedelta(seconds=1.2)
    late = machine.run(deps2, name)
    assert late is not None
    record_tick(late, deps2)
    assert deps2.tallies.read("default", False, minute, minute)[minute] == {"late": 1}
