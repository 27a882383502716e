"""GIVEN an action whose next fire is inside the lock WHEN it is updated THEN the imminent fire
happens as planned; a recurrence's update applies from the next occurrence on (and the answer
says so), a one-off's is refused and nothing is written. A cancel or a pause is not held by the
lock: it wins until the fire is claimed; after the claim a recurrence's applies from the next
occurrence on, a one-off's is refused (``FireUnderWay``) and nothing is written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.errors import ActionLocked, FireUnderWay
from tickwork.domain.events import DetailType
from tickwork.steering.pause import pause_action, resume_action
from tickwork.steering.start import StartCommand, start_action
from tickwork.steering.stop import cancel_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
EVERY_MINUTE = {"id": "r", "rate": "rate(1 minute)", "data": {"v": 1}}


@pytest.fixture
def deps() -> Dependencies:
    deps = fake_dependencies(NOW)  # the default lock: 2 minutes, longer than the period
    start_action(StartCommand(EVERY_MINUTE), deps)
    return deps


def _claim(deps: Dependencies, action_id: str) -> None:
    """The fire the record is at, claimed by its execution: under way."""
    action = deps.records.get(action_id)
    assert action is not None and action.execution_arn is not None
    deps.records.save(action.claimed(deps.clock.now(), action.execution_arn, 20), action.version)


def test_a_rate_shorter_than_the_lock_is_always_inside_it_yet_is_cancelled_at_once(deps) -> None:
    # WHEN a rate(1 minute) recurrence is cancelled (every moment is inside its lock)
    waiting = machine.current(deps, "r")
    answer = cancel_action("r", deps).to_wire()

    # THEN it is cancelled at once: its fire was not claimed yet, and never runs
    assert answer["outcome"] == "cancelled"
    assert deps.records.get("r").status == Status.CANCELLED
    deps.clock.current = NOW + timedelta(minutes=1)
    assert machine.run(deps, waiting) is None


def test_a_cancel_of_a_claimed_recurrence_applies_after_the_fire_under_way(deps) -> None:
    # GIVEN its imminent fire claimed: under way
    deps.clock.current = NOW + timedelta(minutes=1)
    _claim(deps, "r")
    # WHEN it is cancelled
    answer = cancel_action("r", deps).to_wire()

    # THEN it is accepted, applies after the imminent fire, and says so
    assert answer["outcome"] == "deferred" and answer["change"] == "CANCEL"
    assert answer["appliesAfter"] == {"occurrence": 1, "fireTime": "2026-03-07T12:01:00.000Z"}
    assert "under way" in answer["message"]
    assert "applies from the next occurrence on" in answer["message"]
    assert deps.records.get("r").status == Status.IN_PROGRESS
    # AND the fire under way completes, then the action is cancelled: nothing more
    tick = machine.run(deps, machine.current(deps, "r"))
    assert tick is not None and tick.occurrence == 1
    action = deps.records.get("r")
    assert action.status == Status.CANCELLED and action.deferred is None
    assert len(deps.executions.started) == 1  # no execution for occurrence 2
    assert deps.publisher.of_type(DetailType.STOPPED) == [{"id": "r", "generation": 1}]


def test_a_cancel_deferred_to_the_last_fire_still_ends_the_action_cancelled() -> None:
    # GIVEN a recurrence of two fires, its last one under way
    deps = fake_dependencies(NOW)
    start_action(StartCommand({**EVERY_MINUTE, "executionRemainder": 2, "repeat": True}), deps)
    deps.clock.current = NOW + timedelta(minutes=1)
    machine.run(deps, machine.current(deps, "r"))
    deps.clock.current = NOW + timedelta(minutes=2)
    _claim(deps, "r")

    # WHEN it is cancelled then, and the last fire completes
    assert cancel_action("r", deps).to_wire()["outcome"] == "deferred"
    tick = machine.run(deps, machine.current(deps, "r"))

    # THEN the fire happened, and the action ends as asked: CANCELLED, never COMPLETED
    assert tick is not None and tick.occurrence == 2
    action = deps.records.get("r")
    assert action.status == Status.CANCELLED
    assert [h.occurrence for h in action.history] == [1, 2]
    assert deps.publisher.of_type(DetailType.COMPLETED) == []
    assert deps.publisher.of_type(DetailType.STOPPED) == [{"id": "r", "generation": 1}]


def test_an_update_inside_the_lock_applies_from_the_next_occurrence(deps) -> None:
    # WHEN its data and schedule change inside the lock
    result = start_action(StartCommand({**EVERY_MINUTE, "rate": "rate(5 minutes)",
                                        "data": {"v": 2}}), deps)  # fmt: skip

    # THEN the change waits; the imminent fire runs with what it was scheduled with
    assert result.outcome == "deferred" and result.to_wire()["appliesAfter"]["occurrence"] == 1
    deps.clock.current = NOW + timedelta(minutes=1)
    tick = machine.run(deps, machine.current(deps, "r"))
    assert tick is not None and tick.data == {"v": 1}
    # AND after it the new schedule runs, as a new generation from its first fire
    action = deps.records.get("r")
    assert (action.generation, action.occurrence, action.data) == (2, 1, {"v": 2})
    assert action.execution_time == NOW + timedelta(minutes=6)
    assert action.schedule.expression == "rate(5 minutes)"
    assert machine.current(deps, "r") in deps.executions.started


def test_a_pause_inside_the_lock_pauses_at_once(deps) -> None:
    waiting = machine.current(deps, "r")
    answer = pause_action("r", "maintenance", deps).to_wire()

    assert answer["outcome"] == "paused"
    deps.clock.current = NOW + timedelta(minutes=1)
    assert machine.run(deps, waiting) is None  # its fire never runs
    assert deps.records.get("r").status == Status.PAUSED


def test_a_pause_of_a_fire_under_way_pauses_after_it(deps) -> None:
    deps.clock.current = NOW + timedelta(minutes=1)
    _claim(deps, "r")
    answer = pause_action("r", "maintenance", deps).to_wire()

    assert answer["outcome"] == "deferred" and answer["change"] == "PAUSE"
    assert machine.run(deps, machine.current(deps, "r")) is not None
    action = deps.records.get("r")
    assert (
        action.status == Status.PAUSED
        and action.pause is not None
        and action.pause.note == "maintenance"
    )


def test_the_latest_change_asked_for_wins(deps) -> None:
    deps.clock.current = NOW + timedelta(minutes=1)
    _claim(deps, "r")
    cancel_action("r", deps)
    start_action(StartCommand({**EVERY_MINUTE, "data": {"v": 3}}), deps)

    machine.run(deps, machine.current(deps, "r"))

    action = deps.records.get("r")
    assert action.status == Status.PENDING and action.data == {"v": 3}


def test_a_one_off_update_inside_its_lock_is_refused_and_nothing_is_written() -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "once", "duration": "90s"}), deps)
    before = deps.records.get("once")

    with pytest.raises(ActionLocked, match="its only fire is fixed"):
        start_action(StartCommand({"id": "once", "duration": "10m"}), deps)

    assert deps.records.get("once") == before


@pytest.mark.parametrize("change", ["cancel", "pause"])
def test_a_one_off_inside_its_lock_is_cancelled_or_paused_and_never_fires(change: str) -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "once", "duration": "90s"}), deps)
    name = machine.current(deps, "once")

    answer = (cancel_action if change == "cancel" else lambda i, d: pause_action(i, None, d))(
        "once", deps
    )

    assert answer.to_wire()["outcome"] == {"cancel": "cancelled", "pause": "paused"}[change]
    deps.clock.current = NOW + timedelta(seconds=90)
    assert machine.run(deps, name) is None  # its execution ends quietly: nothing is called


@pytest.mark.parametrize("change", ["cancel", "pause"])
def test_a_one_off_under_way_is_refused_and_nothing_is_written(change: str) -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "once", "duration": "90s"}), deps)
    deps.clock.current = NOW + timedelta(seconds=90)
    _claim(deps, "once")
    before = deps.records.get("once")

    with pytest.raises(FireUnderWay, match="under way"):
        if change == "cancel":
            cancel_action("once", deps)
        else:
            pause_action("once", None, deps)

    assert deps.records.get("once") == before


def test_outside_the_lock_a_change_applies_at_once() -> None:
    deps = fake_dependencies(NOW, lock=timedelta(seconds=10))
    start_action(StartCommand(EVERY_MINUTE), deps)

    assert cancel_action("r", deps).to_wire()["outcome"] == "cancelled"
    assert deps.records.get("r").status == Status.CANCELLED


def test_an_update_in_the_lock_counts_executionremainder_from_its_own_first_fire() -> None:
    """executionRemainder is the number of fires a Start schedules, from its own first fire:
    the imminent fire under the old schedule is not counted against the update's (README,
    "executionRemainder"). rate(15 seconds) x 3, updated in its first fire's lock: 1 + 3."""
    deps = fake_dependencies(NOW)
    every_15s = {"id": "r", "rate": "rate(15 seconds)", "executionRemainder": 3, "repeat": True}
    start_action(StartCommand({**every_15s, "data": {"v": 1}}), deps)
    result = start_action(StartCommand({**every_15s, "data": {"v": 2}}), deps)
    assert result.outcome == "deferred"

    fired = []
    for _ in range(10):
        action = deps.records.get("r")
        if action.status != Status.PENDING:
            break
        deps.clock.current = action.execution_time
        tick = machine.run(deps, machine.current(deps, "r"))
        assert tick is not None
        fired.append((tick.data["v"], tick.occurrence))
    assert fired == [(1, 1), (2, 1), (2, 2), (2, 3)]
    assert deps.records.get("r").status == Status.COMPLETED


def test_a_cancel_waiting_for_the_fire_under_way_is_not_made_a_pause(deps) -> None:
    """A fifth review: a pause after a deferred cancel replaced it, and the action ended
    PAUSED (a resume then ran it again)."""
    deps.clock.current = NOW + timedelta(minutes=1)
    _claim(deps, "r")
    assert cancel_action("r", deps).to_wire()["outcome"] == "deferred"

    answer = pause_action("r", "later", deps).to_wire()

    assert answer["outcome"] == "unchanged" and "CANCELLED" in answer["message"]
    machine.run(deps, machine.current(deps, "r"))
    assert deps.records.get("r").status == Status.CANCELLED


def test_a_resume_withdraws_a_pause_waiting_for_the_fire_under_way(deps) -> None:
    """A fifth review: the resume answered unchanged, and the pause applied after the fire."""
    deps.clock.current = NOW + timedelta(minutes=1)
    _claim(deps, "r")
    assert pause_action("r", None, deps).to_wire()["outcome"] == "deferred"

    answer = resume_action("r", None, deps).to_wire()

    assert answer["outcome"] == "resumed" and "withdrawn" in answer["message"]
    machine.run(deps, machine.current(deps, "r"))
    after = deps.records.get("r")
    assert after.status == Status.PENDING and after.deferred is None
