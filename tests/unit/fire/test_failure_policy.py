"""GIVEN a fire that failed past its retries WHEN the failure is recorded THEN it is in the
history and retryable by hand whatever the policy; CONTINUE (a recurrence's default) goes on
with the next occurrence, PAUSE pauses, STOP (a one-off's default) ends FAILED; and the action
needs attention until the failed fire is retried with the key it failed with."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.errors import ActionNotRetryable, ValidationFailed
from tickwork.domain.fire import Outcome, Trigger
from tickwork.domain.selection import Selection
from tickwork.steering.pause import resume_action
from tickwork.steering.retry import retry_action
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)


def _recurring(deps: Dependencies, **detail: str | int) -> None:
    start_action(StartCommand({"id": "r", "rate": "rate(10 minutes)", **detail}), deps)
    deps.clock.current = NOW + timedelta(minutes=10)


def test_continue_is_a_recurrences_default_and_goes_on() -> None:
    deps = fake_dependencies(NOW)
    _recurring(deps)

    answer = machine.fail(deps, machine.current(deps, "r"))

    action = deps.records.get("r")
    assert answer.failure_policy == "CONTINUE" and action.status == Status.PENDING
    assert action.occurrence == 2 and action.execution_time == NOW + timedelta(minutes=20)
    assert action.history[-1].outcome == Outcome.FAILED and action.needs_attention
    assert machine.current(deps, "r") in deps.executions.started
    assert deps.queries.count(Selection())["NEEDS_ATTENTION"] == 1
    assert [a.id for a in deps.queries.page(Selection(attention=True), 10)[0]] == ["r"]


def test_pause_pauses_with_a_note_naming_the_failure() -> None:
    deps = fake_dependencies(NOW)
    _recurring(deps, onFailure="PAUSE")

    machine.fail(deps, machine.current(deps, "r"))

    action = deps.records.get("r")
    assert action.status == Status.PAUSED and action.needs_attention
    assert action.pause is not None and "occurrence 1 failed" in (action.pause.note or "")


@pytest.mark.parametrize("resumed_after", [timedelta(0), timedelta(minutes=35)])
def test_a_resume_after_a_failure_goes_on_with_the_next_occurrence_and_its_own_key(
    resumed_after: timedelta,
) -> None:
    """PAUSE stops the schedule before the next occurrence: the failed one is run again only
    by a retry by hand (with the key it failed with), never by the resumed schedule."""
    deps = fake_dependencies(NOW)
    _recurring(deps, onFailure="PAUSE", executionRemainder=2)
    failed_key = deps.records.get("r").key_of(1)
    machine.fail(deps, machine.current(deps, "r"))
    deps.clock.advance(seconds=resumed_after.total_seconds())

    resume_action("r", None, deps)

    action = deps.records.get("r")
    assert action.status == Status.PENDING and action.occurrence == 2
    assert action.execution_time is not None and action.execution_time > deps.clock.now()
    deps.clock.current = action.execution_time
    tick = machine.run(deps, machine.current(deps, "r"))
    assert tick is not None and tick.occurrence == 2 and tick.idempotency_key != failed_key
    done = deps.records.get("r")
    assert done.status == Status.COMPLETED  # two fires of a two-fire action, not three
    assert [(h.occurrence, h.outcome) for h in done.history] == [
        (1, Outcome.FAILED),
        (2, Outcome.FIRED),
    ]


def test_pause_after_the_last_fire_has_nothing_to_pause_and_completes() -> None:
    deps = fake_dependencies(NOW)
    _recurring(deps, onFailure="PAUSE", executionRemainder=1)

    machine.fail(deps, machine.current(deps, "r"))

    action = deps.records.get("r")
    assert action.status == Status.COMPLETED and action.needs_attention


def test_stop_ends_failed_and_a_one_off_stops_by_default() -> None:
    deps = fake_dependencies(NOW)
    _recurring(deps, onFailure="STOP")
    start_action(StartCommand({"id": "once", "duration": "10m"}), deps)

    machine.fail(deps, machine.current(deps, "r"))
    machine.fail(deps, machine.current(deps, "once"))

    assert deps.records.get("r").status == Status.FAILED
    assert deps.records.get("once").status == Status.FAILED


def test_a_retry_by_hand_runs_the_failed_fire_with_its_own_key_and_clears_attention() -> None:
    deps = fake_dependencies(NOW)
    _recurring(deps)
    failed_key = deps.records.get("r").key_of(1)
    machine.fail(deps, machine.current(deps, "r"))

    answer = retry_action("r", deps).to_wire()

    assert answer["outcome"] == "retried" and answer["occurrence"] == 1
    assert answer["idempotencyKey"] == failed_key  # receivers can dedupe the retry
    tick = machine.run(deps, machine.manual(deps, "r", answer["manual"]))
    assert tick is not None and tick.trigger is Trigger.RETRY and tick.occurrence == 1
    assert tick.idempotency_key == failed_key
    action = deps.records.get("r")
    assert not action.needs_attention and action.occurrence == 2  # the schedule went on
    assert [(h.occurrence, h.outcome, h.trigger) for h in action.history] == [
        (1, Outcome.FAILED, Trigger.SCHEDULED),
        (1, Outcome.FIRED, Trigger.RETRY),
    ]
    # the same manual execution's task run again (a retry) records nothing twice: it puts
    # the tick it recorded on the bus again
    again = machine.run(deps, machine.fire_name(deps, "r", 1, 1, manual=1))
    assert again is not None and again.key == tick.key and again.recorded
    assert again.idempotency_key == failed_key
    assert deps.records.get("r").history == action.history


def test_a_failed_retry_keeps_the_action_needing_attention() -> None:
    deps = fake_dependencies(NOW)
    _recurring(deps)
    machine.fail(deps, machine.current(deps, "r"))
    number = retry_action("r", deps).to_wire()["manual"]

    machine.fail(deps, machine.manual(deps, "r", number))

    action = deps.records.get("r")
    assert action.needs_attention and action.history[-1].trigger is Trigger.RETRY
    assert action.history[-1].outcome == Outcome.FAILED


def test_retry_names_a_failed_occurrence_or_is_refused() -> None:
    deps = fake_dependencies(NOW)
    _recurring(deps)
    with pytest.raises(ActionNotRetryable, match="no failed fire"):
        retry_action("r", deps)
    machine.fail(deps, machine.current(deps, "r"))

    with pytest.raises(ValidationFailed) as refused:
        retry_action("r", deps, occurrence=7)

    assert refused.value.problems[0].field == "occurrence"


def test_every_fire_has_its_own_key_the_same_on_every_attempt() -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "k", "rate": "rate(10 minutes)"}), deps)
    first = deps.records.get("k")
    deps.clock.current = NOW + timedelta(minutes=10)
    name = machine.current(deps, "k")

    attempt_1 = machine.run(deps, name, retry_count=0)
    assert attempt_1 is not None
    keys = {attempt_1.idempotency_key, first.key_of(1)}
    assert len(keys) == 1 and uuid.UUID(attempt_1.idempotency_key).version == 5
    assert first.key_of(2) not in keys  # the next occurrence: another fire, another key
    # a replace starts counting again at occurrence 1, with new keys
    start_action(StartCommand({"id": "k", "rate": "rate(20 minutes)"}), deps)
    assert deps.records.get("k").key_of(1) not in keys
