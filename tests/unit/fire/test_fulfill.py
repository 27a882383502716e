"""GIVEN a started action and a controllable clock WHEN the fulfill step runs THEN it never
fires early, continues long waits, claims once, and ends superseded executions quietly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.unit.fakes import attempt, fake_dependencies
from tests.unit.machine import fulfill_fire
from tickwork.domain.action import Status
from tickwork.domain.errors import ActionSuperseded, WaitContinued
from tickwork.domain.fire import FireAttempt, Outcome
from tickwork.domain.naming import execution_name
from tickwork.domain.times import iso
from tickwork.steering.start import StartCommand, start_action
from tickwork.steering.stop import cancel_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
FIRE = NOW + timedelta(minutes=10)
NAME = execution_name("a:1", 1, 1, key=None)


def _fire(retry: int = 0, leg: int = 0) -> FireAttempt:
    return attempt("a:1", 1, "2026-03-07T12:10:00.000Z", NAME, retry, leg)


@pytest.fixture
def deps():
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "a:1", "duration": "10m", "data": {"k": 1}}, "ev-1"), deps)
    return deps


def test_on_time_fire_claims_and_returns_the_tick(deps) -> None:
    deps.clock.current = FIRE + timedelta(milliseconds=250)

    tick = fulfill_fire(_fire(), deps)

    assert tick.outcome is Outcome.FIRED and tick.late_ms == 250 and tick.data == {"k": 1}
    assert tick.to_wire()["lateMs"] == 250
    action = deps.records.get("a:1")
    # the claim names the execution by its whole identity: its machine and its name
    assert action.status == Status.IN_PROGRESS
    assert action.claimed_by == deps.executions.execution_arn(NAME)


def test_an_early_wake_sleeps_until_the_fire_time(deps) -> None:
    deps.clock.current = FIRE - timedelta(seconds=1.5)  # the emulator truncates waits

    tick = fulfill_fire(_fire(), deps)

    assert deps.clock.slept == [1.5]
    assert tick.actual_time >= tick.scheduled_time
    assert iso(tick.actual_time) == tick.to_wire()["actualTime"] >= tick.to_wire()["scheduledTime"]


def test_a_wake_far_before_the_fire_continues_in_the_next_leg(deps) -> None:
    deps.clock.current = FIRE - timedelta(minutes=5)

    with pytest.raises(WaitContinued):
        fulfill_fire(_fire(), deps)

    leg = execution_name("a:1", 1, 1, leg=1, key=None)
    assert leg in deps.executions.started
    # the record names the next leg: only it may claim the fire now
    action = deps.records.get("a:1")
    assert action.status == Status.PENDING
    assert action.execution_arn == deps.executions.execution_arn(leg)


@pytest.mark.parametrize("change", ["cancel", "pause"])
def test_a_wake_far_before_a_fire_cancelled_meanwhile_ends_quietly(
    deps, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """A cancel (or a pause) landing between an early wake's read and its next leg's write: the
    record still names the waking execution, but it is no longer the fire's; the execution ends
    quietly (WaitContinued), names no leg and starts none — never an error its machine would
    report as a failed fire."""
    from tickwork.fire import fulfill
    from tickwork.steering.pause import pause_action

    deps.clock.current = FIRE - timedelta(minutes=5)
    planned = fulfill.planned_execution

    def steered_meanwhile(*args: object, **kwargs: object) -> tuple[str, str]:
        if change == "cancel":
            cancel_action("a:1", deps)
        else:
            pause_action("a:1", None, deps)
        return planned(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fulfill, "planned_execution", steered_meanwhile)

    with pytest.raises(WaitContinued):
        fulfill_fire(_fire(), deps)

    leg = execution_name("a:1", 1, 1, leg=1, key=None)
    assert leg not in deps.executions.started
    assert deps.records.get("a:1").status in (Status.CANCELLED, Status.PAUSED)


def test_a_retry_of_the_claiming_execution_passes_the_claim(deps) -> None:
    deps.clock.current = FIRE
    fulfill_fire(_fire(), deps)

    tick = fulfill_fire(_fire(retry=1), deps)

    assert tick.attempts == 2


def test_another_execution_after_the_claim_is_superseded(deps) -> None:
    deps.clock.current = FIRE
    fulfill_fire(_fire(), deps)
    other = attempt("a:1", 1, "2026-03-07T12:10:00.000Z", "someone-else")

    with pytest.raises(ActionSuperseded, match="another execution holds it"):
        fulfill_fire(other, deps)


def test_a_cancelled_action_is_superseded(deps) -> None:
    cancel_action("a:1", deps)
    deps.clock.current = FIRE

    with pytest.raises(ActionSuperseded, match="generation 2"):
        fulfill_fire(_fire(), deps)


def test_after_an_outage_a_lost_claim_is_recorded_failed_not_fired_again(deps) -> None:
    from tickwork.fire.reconcile import reconcile

    # GIVEN a fire claimed by an execution that was then lost with the stack: its target may
    # or may not have been reached
    deps.clock.current = FIRE
    fulfill_fire(_fire(), deps)
    deps.executions.started.clear()

    # WHEN the restarted stack reconciles everything, however recent
    result = reconcile(deps, horizon=None, stuck_after=timedelta(0))

    # THEN the fire is recorded failed as an unknown outcome (onUnknownOutcome FAIL, the
    # default), retryable by hand, and no execution runs it again
    assert result == {
        "restarted": [],
        "recorded": [],
        "failed": ["a:1"],
        "released": [],
        "settled": [],
        "missed": [],
    }
    action = deps.records.get("a:1")
    assert action.status == Status.FAILED and action.needs_attention
    assert action.history[-1].error.startswith("FireOutcomeUnknown: its execution")
    assert "may have happened" in action.history[-1].error
    assert deps.executions.started == {}


def test_under_on_unknown_outcome_retry_a_lost_claim_is_released_and_fired_again() -> None:
    from tickwork.fire.reconcile import reconcile

    # GIVEN an action that asked to be run again when its outcome is unknown, whose claimed
    # fire was lost with the stack
    deps = fake_dependencies(NOW)
    detail = {"id": "a:1", "duration": "10m", "onUnknownOutcome": "RETRY"}
    start_action(StartCommand(detail, "ev-1"), deps)
    deps.clock.current = FIRE
    first = fulfill_fire(_fire(), deps)
    deps.executions.started.clear()

    # WHEN the restarted stack reconciles everything, however recent
    result = reconcile(deps, horizon=None, stuck_after=timedelta(0))

    # THEN the action is PENDING again and its execution is started once more
    assert result == {
        "restarted": [], "recorded": [], "failed": [], "released": ["a:1"], "settled": [],
        "missed": [],
    }  # fmt: skip
    assert deps.records.get("a:1").status == Status.PENDING
    assert list(deps.executions.started) == [NAME]
    # AND a fresh execution of that name fires it with the same idempotency key
    again = fulfill_fire(_fire(), deps)
    assert again.outcome is Outcome.FIRED and again.idempotency_key == first.idempotency_key
