"""GIVEN an action record in any status, naming any execution, with any claim WHEN a transition
of its fire or of its steering is asked THEN it is made exactly when the record is in the state
the transition starts from, and otherwise refused by name (``TransitionRefused``), never made
from another state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tickwork.domain.action import ACTIVE, LIVE, Action, Limits, Occurrence, Status
from tickwork.domain.errors import ManualFiresInFlight, TransitionRefused
from tickwork.domain.fire import Outcome, Trigger
from tickwork.domain.schedule import Schedule
from tickwork.domain.steering import MAX_MANUAL_IN_FLIGHT, ChangeKind, Deferred

NOW = datetime(2026, 3, 1, 8, tzinfo=UTC)
LIMITS = Limits()
A = "arn:aws:states:us-east-1:1:execution:t-fire:a-1"
B = "arn:aws:states:us-east-1:1:execution:t-batch:b-1"
# ids shaped like the stack's own names, and an execution name without its ARN (an old claim)
ARNS = st.sampled_from([A, B, "a-1", "b-1", None])


def _record(
    status: Status, named: str | None, claimed: str | None, parked: bool, near: bool = False
) -> Action:
    """``parked``: to launch 15 minutes before its fire, parked a day before (far: launched
    without a name), or — ``near`` — parked 20 s before its launch, the edge of the Parked
    index (the pump names its execution)."""
    launch_at = NOW - timedelta(minutes=15)
    return Action(
        id="b-1",
        action="TICK",
        data={},
        metadata={},
        schedule=Schedule.of_frequency("DAILY", NOW, max_occurrences=5),
        status=status,
        execution_time=NOW,
        occurrence=2,
        generation=3,
        version=7,
        created_at=NOW - timedelta(days=2),
        updated_at=launch_at - timedelta(seconds=20) if near else NOW - timedelta(days=1),
        spec_hash="h",
        execution_arn=named,
        claimed_by=claimed,
        launch_at=launch_at if parked else None,
        far_park=parked and not near,  # as the write that parked it decided (FireState.parked)
    )


RECORDS = st.builds(
    _record, st.sampled_from(list(Status)), ARNS, ARNS, st.booleans(), st.booleans()
)


def _ending(occurrence: int = 2) -> Occurrence:
    return Occurrence(occurrence, NOW, NOW, 1, Outcome.FIRED)


def _made_or_refused(transition: Callable[[], Action], allowed: bool) -> None:
    if allowed:
        transition()
    else:
        with pytest.raises(TransitionRefused):
            transition()


@given(RECORDS, st.sampled_from([A, B]))
def test_a_claim_is_taken_only_of_a_pending_fire_by_the_execution_it_names(
    record: Action, execution: str
) -> None:
    named = record.execution_arn in (execution, execution.rpartition(":")[2])
    # parked a day before its launch, naming no execution: the pump started one without a
    # write, and a proved execution of its fire claims it (never one parked 20 s before)
    far = record.launch_at is not None and record.execution_arn is None and record.far_park
    allowed = record.status is Status.PENDING and (named or far)
    _made_or_refused(lambda: record.claimed(NOW, execution, 20), allowed)
    if allowed:
        claimed = record.claimed(NOW, execution, 20)
        assert claimed.holds_claim(execution)
        assert not claimed.is_parked


@given(RECORDS, st.sampled_from([A, B]))
def test_a_claim_is_handed_over_and_released_only_by_its_holder(
    record: Action, holder: str
) -> None:
    holds = record.holds_claim(holder)
    _made_or_refused(lambda: record.handed_over(NOW, holder, A, 20), holds)
    _made_or_refused(lambda: record.released(NOW, holder, 20), holds)
    if holds:
        assert record.released(NOW, holder, 20).status is Status.PENDING


@given(RECORDS, st.integers(1, 3))
def test_a_fire_is_recorded_only_while_the_record_is_at_it(record: Action, occurrence: int) -> None:
    allowed = record.status in ACTIVE and occurrence == record.occurrence
    ending = _ending(occurrence)
    _made_or_refused(
        lambda: record.fired(NOW, ending, NOW + timedelta(days=1), {}, LIMITS), allowed
    )
    failure = replace(ending, outcome=Outcome.FAILED, error="boom")
    _made_or_refused(lambda: record.failed(NOW, failure, None, LIMITS), allowed)


@given(RECORDS)
def test_the_launch_states_start_from_their_own(record: Action) -> None:
    _made_or_refused(lambda: record.launched(NOW, A), record.is_parked)
    _made_or_refused(lambda: record.parked_again(NOW, NOW), record.status is Status.PENDING)
    _made_or_refused(lambda: record.with_execution(NOW, A), record.status in ACTIVE)
    _made_or_refused(lambda: record.noted_missed(NOW), record.status is Status.PENDING)
    _made_or_refused(
        lambda: record.noted_failure(NOW, "boom", 1), record.status is Status.IN_PROGRESS
    )


@given(RECORDS)
def test_steering_transitions_start_from_their_own(record: Action) -> None:
    _made_or_refused(lambda: record.paused(NOW, None, LIMITS), record.status in ACTIVE)
    _made_or_refused(lambda: record.resumed(NOW, NOW, None, LIMITS), record.status is Status.PAUSED)
    _made_or_refused(
        lambda: record.missed_while_paused(NOW, LIMITS), record.status is Status.PAUSED
    )
    _made_or_refused(lambda: record.fired_now(NOW, LIMITS), record.status in LIVE)
    _made_or_refused(lambda: record.retried(NOW, LIMITS), record.status is Status.FAILED)
    _made_or_refused(
        lambda: record.cancelled(NOW, LIMITS), record.status in LIVE | {Status.COMPLETED}
    )
    deferred = Deferred(ChangeKind.CANCEL, NOW)
    _made_or_refused(lambda: record.deferring(NOW, deferred), record.status in ACTIVE)


@given(RECORDS)
def test_a_manual_fire_is_claimed_and_recorded_only_while_in_flight(record: Action) -> None:
    asked, fire = record.manual_requested(NOW, Trigger.RUN_NOW)
    _made_or_refused(lambda: asked.manual_claimed(NOW, fire.number, A), True)
    _made_or_refused(lambda: record.manual_claimed(NOW, fire.number, A), False)
    ending = replace(_ending(0), trigger=Trigger.RUN_NOW, manual=fire.number)
    done = asked.manual_recorded(NOW, fire.number, ending, fire.idempotency_key, LIMITS)
    _made_or_refused(
        lambda: done.manual_recorded(NOW, fire.number, ending, fire.idempotency_key, LIMITS),
        False,
    )


def test_no_more_manual_fires_than_the_bound_are_asked_at_once() -> None:
    record = _record(Status.PENDING, A, None, False)
    for _ in range(MAX_MANUAL_IN_FLIGHT):
        record, _fire = record.manual_requested(NOW, Trigger.RUN_NOW)
    with pytest.raises(ManualFiresInFlight):
        record.manual_requested(NOW, Trigger.RUN_NOW)
