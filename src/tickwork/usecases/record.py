"""After a fire: record it, then start the next recurrence, finish, or apply what waited.

Driven by tickwork's own "Schedule Tick" and "Schedule Failed" events (``Tick`` and
``FireFailure`` of the fire contract). Each is keyed on its fire: a repeated or stale delivery
changes nothing, except that a record already moved on to its next occurrence makes sure that
occurrence's execution runs (repairing a crash between the write and the start).

A scheduled fire that failed past its retries is recorded, stays retryable by hand, and the
action's failure policy decides the rest (CONTINUE, PAUSE, STOP). A change asked for inside
the lock applies here, once the fire it waited for is recorded. A fire asked for by hand (run
now, retry) is recorded beside the schedule, which it never moves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from tickwork.dependencies import Dependencies
from tickwork.domain.action import ACTIVE, Action, Occurrence, Status
from tickwork.domain.announcements import Completed
from tickwork.domain.batch import is_batch_name
from tickwork.domain.errors import ActionConflict
from tickwork.domain.fire import FireFailure, FireKey, Outcome, Tick
from tickwork.domain.fire_tally import fire_kind
from tickwork.domain.times import ceil_ms
from tickwork.usecases.answers import Done, RecordAnswer
from tickwork.usecases.deferral import settle
from tickwork.usecases.launch import launch, plan

__all__ = ["NextSeat", "following_fire", "occurrence_of", "record_failure", "record_tick"]

_WRITE_ATTEMPTS = 3
_IGNORED = "stale or repeated delivery"


class NextSeat(Protocol):
    """A place for the recorded fire's next fire in a batch already planned (a batch chains
    its recurring fires' next fires into batches of their own: usecases.batch_chain)."""

    def take(self, following: Action) -> str | None:
        """The execution ARN to plan ``following`` (the record about to be written, at its
        next fire) into, or None: it is planned and launched as usual."""
        ...

    def taken(self, written: bool) -> None:
        """Whether the write that planned it into the seat's batch landed."""
        ...


def record_tick(
    tick: Tick,
    deps: Dependencies,
    current: Action | None = None,
    tally: bool = True,
    seat: NextSeat | None = None,
) -> RecordAnswer:
    """``current``: the record as just read, if the caller has it (saves a read); ``tally``:
    False when the caller counts the fire itself (a batch adds its fires' tallies at once);
    ``seat``: where the next fire may go instead of an execution of its own."""
    if tick.manual:
        record = occurrence_of(tick)
        return _record_manual(
            tick.action_id, tick.manual, record, tick.idempotency_key, deps, tally
        )
    for _ in range(_WRITE_ATTEMPTS):
        action = current or deps.records.get(tick.action_id)
        current = None
        if action is None or not _is_current(action, tick.key):
            return _repeat(action, tick, deps)
        now = deps.clock.now()
        following = None
        if tick.outcome is not Outcome.NO_ACTION:
            following = following_fire(action, tick.scheduled_time, tick.occurrence, now)
        occurrence = occurrence_of(tick)
        fired = action.fired(now, occurrence, following, tick.result, deps.limits)
        try:
            answer = _write(action, fired, now, deps, seat)
        except ActionConflict:
            continue
        if tally:
            _tally(action, occurrence, deps)
        return answer
    raise ActionConflict(tick.action_id, f"could not record occurrence {tick.occurrence}")


def record_failure(failure: FireFailure, deps: Dependencies, tally: bool = True) -> RecordAnswer:
    if failure.manual:
        for _ in range(_WRITE_ATTEMPTS):
            action = deps.records.get(failure.action_id)
            fire = action.manual.fire(failure.manual) if action else None
            if action is None or fire is None:
                break
            record = _failed_occurrence(failure, action.retry_count, deps.clock.now())
            try:
                return _record_manual(
                    failure.action_id, failure.manual, record, fire.idempotency_key, deps, tally
                )
            except ActionConflict:
                continue
        return RecordAnswer(failure.action_id, Done.IGNORED, reason=_IGNORED)
    for _ in range(_WRITE_ATTEMPTS):
        action = deps.records.get(failure.action_id)
        if action is None or not _is_current(action, failure.key):
            return RecordAnswer(failure.action_id, Done.IGNORED, reason=_IGNORED)
        now = deps.clock.now()
        record = _failed_occurrence(failure, action.retry_count, now)
        following = following_fire(action, failure.scheduled_time, failure.occurrence, now)
        failed = action.failed(now, record, following, deps.limits)
        try:
            answer = _write(action, failed, now, deps)
        except ActionConflict:
            continue
        if tally:
            _tally(action, record, deps)
        return replace(answer, error=record.error, failure_policy=action.failure_policy)
    raise ActionConflict(
        failure.action_id, f"could not record the failure of occurrence {failure.occurrence}"
    )


def following_fire(
    action: Action, scheduled: datetime, occurrence: int, now: datetime
) -> datetime | None:
    """The next occurrence after this one. Occurrences missed in an outage that the catch-up
    policy does not run are passed over: the chain resumes at the first one still worth a fire."""
    following = action.schedule.next_fire_time(
        scheduled, occurrence, not_before=action.catch_up.resume_from(now)
    )
    return following and ceil_ms(following)


def _write(
    before: Action,
    recorded: Action,
    now: datetime,
    deps: Dependencies,
    seat: NextSeat | None = None,
) -> RecordAnswer:
    """Write what the fire left (and any change that waited for it), then start the next fire
    (unless the seat's batch holds it) or announce the end."""
    after, announcements = settle(recorded, now, deps)
    seated = None
    if after.status == Status.PENDING:
        seated = seat.take(after) if seat is not None else None
        after = after.planned(seated) if seated else plan(after, now, deps)
    written = False
    try:
        deps.records.save(after, expected_version=before.version)
        written = True
    finally:
        if seat is not None and seated:
            seat.taken(written)
    if after.status == Status.PENDING and not seated:
        launch(after, now, deps)
    elif after.status == Status.COMPLETED:
        _publish_completed(after, recorded.history[-1].occurrence, deps)
    _announce(announcements)
    upcoming = after.execution_time if after.status == Status.PENDING else None
    return RecordAnswer(after.id, Done.RECORDED, str(after.status), execution_time=upcoming)


def _record_manual(
    action_id: str,
    number: int,
    record: Occurrence,
    key: str,
    deps: Dependencies,
    tally: bool = True,
) -> RecordAnswer:
    for _ in range(_WRITE_ATTEMPTS):
        action = deps.records.get(action_id)
        if action is None or action.manual.fire(number) is None:
            return RecordAnswer(action_id, Done.IGNORED, reason=_IGNORED)
        now = deps.clock.now()
        updated = action.manual_recorded(now, number, record, key, deps.limits)
        try:
            deps.records.save(updated, expected_version=action.version)
        except ActionConflict:
            continue
        if tally:
            _tally(action, record, deps)
        return RecordAnswer(
            action_id, Done.RECORDED, str(updated.status), manual=number, trigger=record.trigger
        )
    raise ActionConflict(action_id, f"could not record manual fire {number}")


def _tally(action: Action, occurrence: Occurrence, deps: Dependencies) -> None:
    """Count a fire just recorded in the fire totals, once: only the write that recorded it
    gets here (a repeated tick is ignored before)."""
    kind = fire_kind(occurrence)
    if kind is not None:
        deps.tallies.add(action.group, occurrence.actual_time, kind)


def occurrence_of(tick: Tick) -> Occurrence:
    return Occurrence(
        occurrence=tick.occurrence,
        scheduled_time=tick.scheduled_time,
        actual_time=tick.actual_time,
        attempts=tick.attempts,
        outcome=tick.outcome,
        late_ms=tick.late_ms,
        trigger=tick.trigger,
        manual=tick.manual,
        execution=tick.execution_name,
    )


def _failed_occurrence(failure: FireFailure, retry_count: int, now: datetime) -> Occurrence:
    cause = _cause_message(failure.cause)
    return Occurrence(
        occurrence=failure.occurrence,
        scheduled_time=failure.scheduled_time,
        actual_time=now,
        attempts=retry_count + 1,
        outcome=Outcome.FAILED,
        error=f"{failure.error}: {cause}"[:1000] if cause else failure.error,
        trigger=failure.trigger,
        manual=failure.manual,
        execution=failure.execution_name or None,
    )


def _is_current(action: Action, key: FireKey) -> bool:
    return action.status in ACTIVE and action.fire_key == key


def _repeat(action: Action | None, tick: Tick, deps: Dependencies) -> RecordAnswer:
    moved_on = (
        action is not None
        and action.status == Status.PENDING
        and action.fire_key == (tick.action_id, tick.generation, tick.occurrence + 1, 0)
    )
    if action is not None and moved_on and not _in_a_batch(action):
        launch(action, deps.clock.now(), deps)
    elif action is not None and _completed_by(action, tick):
        # The write landed but the event may not have (a crash in between): at least once.
        _publish_completed(action, tick.occurrence, deps)
    return RecordAnswer(tick.action_id, Done.IGNORED, reason=_IGNORED)


def _in_a_batch(action: Action) -> bool:
    """Its next fire was planned into a batch (which starts it, or the reconciler does)."""
    return is_batch_name((action.execution_arn or "").rpartition(":")[2])


def _completed_by(action: Action, tick: Tick) -> bool:
    return (
        action.status == Status.COMPLETED
        and action.generation == tick.generation
        and bool(action.history)
        and action.history[-1].occurrence == tick.occurrence
    )


def _publish_completed(action: Action, occurrences: int, deps: Dependencies) -> None:
    deps.publisher.publish(Completed(action.id, action.generation, occurrences))


def _announce(announcements: list[Callable[[], None]]) -> None:
    for announce in announcements:
        announce()


def _cause_message(cause: str | None) -> str:
    """A Lambda error's Cause is the JSON of {errorType, errorMessage, ...}: keep the message."""
    if cause is None:
        return ""
    try:
        parsed = json.loads(cause)
    except ValueError:
        return cause
    return str(parsed.get("errorMessage", cause)) if isinstance(parsed, dict) else cause
