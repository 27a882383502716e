"""GIVEN a recurring action and a stack that was down for ten minutes WHEN its execution finally
runs THEN the catch-up policy decides: ONCE fires the missed occurrence once and resumes on
time, SKIP records it SKIPPED without running it, ALL runs every one inside the window."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.unit.fakes import fake_dependencies
from tests.unit.machine import fulfill_fire
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.errors import OccurrenceSkipped
from tickwork.domain.fire import FireAttempt, Tick
from tickwork.fire.planning import planned_execution
from tickwork.fire.record import record_tick
from tickwork.fulfillment.notifier import LoggingNotifier
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
FIRST = NOW + timedelta(minutes=1)
SMS = {"notificationType": "SMS", "templateType": "REMINDER", "mobile": "60123456789"}


def _start(deps: Dependencies, **detail: Any) -> None:
    start_action(
        StartCommand({"id": "r", "rate": "rate(1 minute)", "action": "SEND_NOTIFICATION",
                      "data": SMS, **detail}),
        deps,
    )  # fmt: skip


def _run_current(deps: Dependencies) -> Tick | None:
    """Run the action's current execution the way the machine would: fulfill, then the tick."""
    action = deps.records.get("r")
    name, _ = planned_execution(action, deps)
    fire = FireAttempt(deps.executions.started[name], deps.executions.execution_arn(name))
    try:
        tick = fulfill_fire(fire, deps)
    except OccurrenceSkipped:
        return None
    record_tick(tick, deps)
    return tick


NOTIFIER = LoggingNotifier()


def _sent(deps: Dependencies) -> int:
    return len([n for n in NOTIFIER.sent if n.action_id == "r" and n is not None])


@pytest.fixture
def deps() -> Dependencies:
    global NOTIFIER
    NOTIFIER = LoggingNotifier()
    return fake_dependencies(NOW, history_limit=50, notifier=NOTIFIER)


def test_once_fires_the_missed_occurrence_late_and_resumes_on_time(deps) -> None:
    # GIVEN the default policy, and the stack down from 12:01 to 12:11:20
    _start(deps)
    deps.clock.current = FIRST + timedelta(minutes=10, seconds=20)

    # WHEN the 12:01 execution runs
    tick = _run_current(deps)

    # THEN it fires once, 620 s late; 12:02 … 12:10 are coalesced into it, and the chain
    # resumes at 12:11, which is 20 s late: inside the 60 s threshold, so not missed
    assert tick is not None and tick.late_ms == 620_000
    action = deps.records.get("r")
    assert action.history[-1].outcome == "FIRED" and action.history[-1].late_ms == 620_000
    assert action.execution_time == NOW + timedelta(minutes=11)
    assert action.occurrence == 2 and _sent(deps) == 1


def test_skip_records_the_missed_occurrence_and_never_runs_it(deps) -> None:
    _start(deps, catchUp="SKIP")
    deps.clock.current = FIRST + timedelta(minutes=10, seconds=20)

    assert _run_current(deps) is None

    action = deps.records.get("r")
    assert _sent(deps) == 0
    assert action.status == Status.PENDING
    assert action.history[-1].outcome == "SKIPPED" and action.history[-1].late_ms == 620_000
    assert action.execution_time == NOW + timedelta(minutes=11)
    # (an ordinary ending is its history entry: the transitions keep what changed the action)
    assert action.history[-1].reason == "missed; catch-up SKIP"
    assert [t.reason for t in action.transitions] == ["created"]
    (skipped,) = deps.publisher.of_type("Schedule Skipped")
    assert skipped["occurrence"] == 1 and skipped["catchUp"] == "SKIP"
    # AND the 12:11 occurrence, late but inside the threshold, runs
    assert _run_current(deps) is not None and _sent(deps) == 1


def test_skip_runs_a_fire_that_is_late_but_within_the_threshold(deps) -> None:
    _start(deps, catchUp="SKIP", misfireThreshold="30s")
    deps.clock.current = FIRST + timedelta(seconds=29)

    assert _run_current(deps) is not None and _sent(deps) == 1


def test_all_runs_every_missed_occurrence_inside_the_window_in_order(deps) -> None:
    # GIVEN ALL with a 5-minute window, and the stack down from 12:01 to 12:11:20
    _start(deps, catchUp="ALL", catchUpWindow="5m")
    deps.clock.current = FIRST + timedelta(minutes=10, seconds=20)

    # WHEN the executions run one after another
    outcomes = ["SKIPPED" if _run_current(deps) is None else "FIRED" for _ in range(6)]

    # THEN 12:01 (over 5 min late) is skipped; 12:07 … 12:11 fire late, in order; 12:12 waits
    action = deps.records.get("r")
    assert outcomes == ["SKIPPED", "FIRED", "FIRED", "FIRED", "FIRED", "FIRED"]
    assert [h.scheduled_time for h in action.history] == [
        NOW + timedelta(minutes=m) for m in (1, 7, 8, 9, 10, 11)
    ]
    assert _sent(deps) == 5
    assert action.execution_time == NOW + timedelta(minutes=12)


def test_a_missed_one_off_under_skip_completes_without_running(deps) -> None:
    start_action(
        StartCommand({"id": "r", "duration": "1m", "catchUp": "SKIP",
                      "action": "SEND_NOTIFICATION", "data": SMS}),
        deps,
    )  # fmt: skip
    deps.clock.current = FIRST + timedelta(hours=1)

    assert _run_current(deps) is None

    action = deps.records.get("r")
    assert action.status == Status.COMPLETED and _sent(deps) == 0
    assert [h.outcome for h in action.history] == ["SKIPPED"]
