"""GIVEN live actions WHEN an operator pauses, resumes or runs one now THEN a paused action
does not fire and costs no execution, resuming goes on from now without catching up, and a
run now fires once, beside the schedule, recorded as RUN_NOW — and finished actions refuse."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.errors import (
    ActionConflict,
    ActionFinished,
    ManualFiresInFlight,
    ValidationFailed,
)
from tickwork.domain.events import DetailType
from tickwork.domain.fire import Outcome, Trigger
from tickwork.domain.selection import Selection
from tickwork.fire.writes import ATTEMPTS
from tickwork.steering.pause import pause_action, resume_action
from tickwork.steering.run_now import run_now
from tickwork.steering.start import StartCommand, start_action
from tickwork.steering.stop import cancel_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
HOURLY = {"id": "h", "rate": "rate(1 hour)"}


@pytest.fixture
def deps() -> Dependencies:
    deps = fake_dependencies(NOW)
    start_action(StartCommand(HOURLY), deps)
    return deps


def test_a_paused_action_does_not_fire_and_its_execution_is_stopped(deps) -> None:
    waiting = machine.current(deps, "h")

    answer = pause_action("h", "waiting for the new price list", deps).to_wire()

    assert answer["outcome"] == "paused" and answer["note"] == "waiting for the new price list"
    action = deps.records.get("h")
    assert action.status == Status.PAUSED and action.generation == 2
    assert deps.executions.stopped == [deps.executions.execution_arn(waiting)]
    # its old execution, woken anyway, finds it superseded and fires nothing
    deps.clock.current = NOW + timedelta(hours=1)
    assert machine.run(deps, waiting) is None
    assert deps.queries.count(Selection())["PAUSED"] == 1
    assert deps.publisher.of_type(DetailType.PAUSED)[0]["note"] == answer["note"]


def test_resume_goes_on_from_now_and_does_not_catch_up(deps) -> None:
    pause_action("h", None, deps)
    deps.clock.current = NOW + timedelta(hours=3, minutes=20)  # three fires passed meanwhile

    answer = resume_action("h", None, deps).to_wire()

    action = deps.records.get("h")
    assert answer["outcome"] == "resumed" and action.status == Status.PENDING
    assert action.execution_time == NOW + timedelta(hours=4)  # the next one after now
    assert action.occurrence == 1  # nothing fired while paused
    deps.clock.current = NOW + timedelta(hours=4)
    assert machine.run(deps, machine.current(deps, "h")) is not None
    assert [h.outcome for h in deps.records.get("h").history] == [Outcome.FIRED]


def test_resume_before_the_paused_fire_keeps_it() -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "later", "duration": "1h"}), deps)
    pause_action("later", None, deps)
    deps.clock.advance(minutes=10)

    resume_action("later", None, deps)

    assert deps.records.get("later").execution_time == NOW + timedelta(hours=1)


def test_a_one_off_resumed_after_its_time_is_not_caught_up() -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "once", "duration": "1h"}), deps)
    pause_action("once", None, deps)
    deps.clock.advance(hours=2)

    answer = resume_action("once", None, deps).to_wire()

    action = deps.records.get("once")
    assert answer["outcome"] == "completed" and action.status == Status.COMPLETED
    assert action.history[-1].outcome == Outcome.SKIPPED
    assert action.history[-1].error == "missed while paused"


def test_pause_and_resume_are_idempotent(deps) -> None:
    assert resume_action("h", None, deps).to_wire()["outcome"] == "unchanged"
    pause_action("h", None, deps)
    assert pause_action("h", None, deps).to_wire()["outcome"] == "unchanged"


@pytest.mark.parametrize("change", [pause_action, resume_action])
def test_a_finished_action_cannot_be_paused_or_resumed(deps, change) -> None:
    cancel_action("h", deps)
    before = deps.records.get("h")

    with pytest.raises(ActionFinished, match="is CANCELLED"):
        change("h", None, deps)

    assert deps.records.get("h") == before


def test_a_note_longer_than_allowed_is_refused_naming_the_field(deps) -> None:
    with pytest.raises(ValidationFailed) as refused:
        pause_action("h", "x" * 501, deps)
    assert refused.value.problems[0].field == "note"
    assert deps.records.get("h").status == Status.PENDING


def test_run_now_fires_once_beside_the_schedule(deps) -> None:
    scheduled = deps.records.get("h")

    answer = run_now("h", deps, request_id="req-1").to_wire()
    again = run_now("h", deps, request_id="req-1").to_wire()  # the same request, delivered twice

    assert answer["outcome"] == "triggered" and again["outcome"] == "unchanged"
    assert answer["manual"] == 1 and answer["trigger"] == "RUN_NOW"
    tick = machine.run(deps, machine.manual(deps, "h", 1))
    assert tick is not None and tick.trigger is Trigger.RUN_NOW and tick.manual == 1
    assert tick.idempotency_key == answer["idempotencyKey"]
    action = deps.records.get("h")
    # the schedule is unmoved: same next fire, same occurrence, same execution
    assert (action.execution_time, action.occurrence) == (
        scheduled.execution_time,
        scheduled.occurrence,
    )
    assert [(h.trigger, h.outcome) for h in action.history] == [(Trigger.RUN_NOW, Outcome.FIRED)]
    assert action.manual.in_flight == ()
    # a later delivery of the same request still fires nothing
    assert run_now("h", deps, request_id="req-1").to_wire()["outcome"] == "unchanged"
    assert len(deps.records.get("h").history) == 1


def test_run_now_works_while_paused(deps) -> None:
    pause_action("h", None, deps)

    run_now("h", deps)
    machine.run(deps, machine.manual(deps, "h", 1))

    action = deps.records.get("h")
    assert action.status == Status.PAUSED and action.history[-1].trigger is Trigger.RUN_NOW


def test_run_now_of_a_one_off_fires_it_now_instead_of_later() -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "once", "duration": "1h"}), deps)

    answer = run_now("once", deps).to_wire()

    assert answer["outcome"] == "triggered"
    action = deps.records.get("once")
    assert action.execution_time == NOW and action.generation == 2
    tick = machine.run(deps, machine.current(deps, "once"))
    assert tick is not None and tick.trigger is Trigger.RUN_NOW
    assert deps.records.get("once").status == Status.COMPLETED


def test_run_now_of_a_cancelled_action_is_refused(deps) -> None:
    cancel_action("h", deps)
    with pytest.raises(ActionFinished, match="cannot be run now"):
        run_now("h", deps)


def test_manual_fires_in_flight_are_bounded(deps) -> None:
    for _ in range(10):
        run_now("h", deps)
    with pytest.raises(ManualFiresInFlight):
        run_now("h", deps)


def _raced(deps: Dependencies, races: int) -> list[int]:
    """Another writer (a fire recorded, the pump launching or parking it again) changes the
    record between each of the first ``races`` reads and the write that follows it; the
    versions it raced are returned as they happen."""
    records, read = deps.records, deps.records.get
    raced: list[int] = []

    def get(action_id: str):  # type: ignore[no-untyped-def]
        action = read(action_id)
        if action is not None and len(raced) < races:
            raced.append(action.version)
            records.save(replace(action, version=action.version + 1), action.version)
        return action

    deps.records.get = get  # type: ignore[method-assign]
    return raced


@pytest.mark.parametrize("races", [0, 1, 2, 3])
@pytest.mark.parametrize("steer", ["pause", "resume"])
def test_a_pause_or_resume_racing_a_fire_reads_again_and_decides_again(
    deps, steer: str, races: int
) -> None:
    # GIVEN a record that another writer (a fire recorded, as right after a Run Now) changes
    # between each of the first `races` reads and the write that follows it
    if steer == "resume":
        pause_action("h", None, deps)
    read = deps.records.get
    raced = _raced(deps, races)
    act = pause_action if steer == "pause" else resume_action

    # WHEN the user pauses or resumes it
    if races >= ATTEMPTS:  # THEN it gives up only after as many lost races as an update does
        with pytest.raises(ActionConflict):
            act("h", None, deps)
        return
    answer = act("h", None, deps).to_wire()

    # THEN the change is applied once, to the record as it is now
    assert answer["outcome"] == ("paused" if steer == "pause" else "resumed")
    stored = read("h")
    assert stored.status == (Status.PAUSED if steer == "pause" else Status.PENDING)
    if raced:  # written once, over the last writer's version
        assert stored.version == raced[-1] + 2


@pytest.mark.parametrize("races", [0, 1, 2, 3])
@pytest.mark.parametrize("steer", ["cancel", "run now", "one-off run now"])
def test_a_cancel_or_run_now_racing_the_pump_reads_again_and_decides_again(
    deps, steer: str, races: int
) -> None:
    # GIVEN a record (a recurrence, or a one-off well outside its lock) that another writer —
    # the pump marking its fire launched, the reconciler parking it again — changes between
    # each of the first `races` reads and the write that follows it
    action_id = "h"
    if steer == "one-off run now":
        action_id = "once"
        start_action(StartCommand({"id": "once", "duration": "1d"}), deps)
    read = deps.records.get
    raced = _raced(deps, races)

    # WHEN the user cancels it or runs it now
    def act():  # type: ignore[no-untyped-def]
        return cancel_action(action_id, deps) if steer == "cancel" else run_now(action_id, deps)

    if races >= ATTEMPTS:  # THEN it gives up only after as many lost races as an update does
        with pytest.raises(ActionConflict):
            act()
        return
    answer = act().to_wire()

    # THEN it is applied once, to the record as it is now: no 409 for a race the user
    # cannot see
    assert answer["outcome"] == ("cancelled" if steer == "cancel" else "triggered")
    stored = read(action_id)
    assert stored is not None
    if steer == "cancel":
        assert stored.status == Status.CANCELLED
    elif steer == "run now":
        assert len(stored.manual.in_flight) == 1
    if raced:  # written over the last writer's version
        assert stored.version > raced[-1] + 1


@pytest.mark.parametrize("steer", ["cancel", "run now"])
def test_a_write_that_landed_with_its_answer_lost_is_not_done_twice(deps, steer: str) -> None:
    # GIVEN a table whose first write of the request lands but answers ActionConflict (a
    # conditional write the client retried after a lost answer fails its own condition)
    records, save = deps.records, deps.records.save
    lost: list[int] = []

    def landed_then_lost(action, expected_version=None, **kwargs):  # type: ignore[no-untyped-def]
        save(action, expected_version=expected_version, **kwargs)
        if not lost:
            lost.append(action.version)
            raise ActionConflict(action.id, "the condition failed on the retried write")

    records.save = landed_then_lost  # type: ignore[method-assign]

    # WHEN the user cancels it, or runs it now, once
    answer = (cancel_action if steer == "cancel" else run_now)("h", deps).to_wire()

    # THEN it is done once, and answered as done: one manual fire, or the cancel's
    # follow-ups (its execution stopped, Schedule Stopped announced)
    assert lost, "the lost answer happened"
    after = records.get("h")
    assert after is not None
    if steer == "run now":
        assert answer["outcome"] == "triggered"
        assert len(after.manual.in_flight) == 1
        return
    assert answer["outcome"] == "cancelled" and after.status == Status.CANCELLED
    assert len(deps.publisher.of_type(DetailType.STOPPED)) == 1  # type: ignore[attr-defined]
