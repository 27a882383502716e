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
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Protocol

from tickwork.answers import Done, RecordAnswer
from tickwork.domain.action import Action, Occurrence, Status
from tickwork.domain.action.following import NO_OVERLAP, OVERLAP_REASON, Overlap, after_fire
from tickwork.domain.announcements import Completed, Late, Paused, Skipped
from tickwork.domain.errors import TickworkError
from tickwork.domain.execution import Machine
from tickwork.domain.fire import FireFailure, FireKey, Outcome, Tick
from tickwork.domain.steering import FailurePolicy
from tickwork.fire import writes
from tickwork.fire.backfill_step import continue_backfill
from tickwork.fire.calendar_reads import SHIFTED_BY_CALENDAR, holding_calendar, with_fresh_calendar
from tickwork.fire.deferred import apply_deferred
from tickwork.fire.launch import launch
from tickwork.fire.needs import Records
from tickwork.fire.orders import kind_of
from tickwork.fire.overlap import handed_on_entry
from tickwork.fire.planning import plan, rounded_by
from tickwork.fire.writes import Written
from tickwork.fulfillment.dead_letter import DeadLetter, send_dead_letter

__all__ = ["NextSeat", "occurrence_of", "record_failure", "record_tick"]

log = logging.getLogger("tickwork")
_IGNORED = "stale or repeated delivery"


class NextSeat(Protocol):
    """A place for the recorded fire's next fire in a batch already planned (a batch plans
    its recurring members' next fires into follow-on batches: fire.follow_on)."""

    def take(self, following: Action) -> str | None:
        """The execution ARN to plan ``following`` (the record about to be written, at its
        next fire) into, or None: it is planned and launched as usual."""
        ...

    def taken(self, written: bool) -> None:
        """Whether the write that planned it into the seat's batch landed."""
        ...


def record_tick(
    tick: Tick,
    deps: Records,
    current: Action | None = None,
    seat: NextSeat | None = None,
) -> RecordAnswer:
    """``current``: the record as just read, if the caller has it (saves a read); ``seat``:
    where the next fire may go instead of an execution of its own. The write counts the fire
    in the fire totals (``writes.record``)."""
    occurrence = occurrence_of(tick)
    if tick.manual:
        answer = _record_manual(tick.action_id, tick.manual, occurrence, tick.idempotency_key, deps)
        recorded = answer.outcome is Done.RECORDED
        return replace(answer, late_ms=tick.late_ms) if recorded else answer
    thresholds: list[timedelta] = []
    passed: list[Overlap] = []

    def fired(action: Action, now: datetime) -> Action:
        thresholds[:] = [action.catch_up.threshold]
        ran = _as_moved(occurrence, action)
        action = with_fresh_calendar(action, now, deps, afresh=True)  # as it is now
        if tick.outcome is Outcome.NO_ACTION:
            return action.fired(now, ran, None, tick.result, deps.limits)
        ended = tick.actual_time
        following, overlap = after_fire(action, tick.scheduled_time, tick.occurrence, now, ended)
        passed[:] = [overlap]
        held = None if following else holding_calendar(action, lambda a: _after(a, tick, now))
        return action.fired(now, ran, following, tick.result, deps.limits, held, overlap)

    answer = _record(
        tick.key,
        _execution_of(tick, deps),
        fired,
        deps,
        current,
        seat,
        on_repeat=lambda action: _repeat(action, tick, deps),
    )
    if answer.outcome is not Done.RECORDED:
        return answer
    if thresholds:
        _announce_if_late(tick, thresholds[0], deps)
    _announce_skips(tick.action_id, tick.generation, passed, deps)
    return replace(answer, late_ms=tick.late_ms)


def _as_moved(ran: Occurrence, action: Action) -> Occurrence:
    """The history entry of an occurrence that fired at a time it was moved to: its own
    scheduled time kept, the time it was moved to beside it, and why."""
    origin = action.origin_of(ran.scheduled_time)
    change = action.change_of(origin)
    if change is None or change.to != ran.scheduled_time or origin == ran.scheduled_time:
        return ran
    note = change.note
    if note and note.startswith(SHIFTED_BY_CALENDAR):  # a missed fire its calendar moved
        why = f"moved by its calendar: {note}"
    else:
        why = f"moved by request: {note}" if note else "moved by request"
    return replace(ran, scheduled_time=origin, moved_to=ran.scheduled_time, reason=why)


def _announce_if_late(tick: Tick, threshold: timedelta, deps: Records) -> None:
    """A fire that ran later than its action's misfireThreshold past its planned wake (the
    whole second at or after it, ``FirePrecision`` second: ``planning.rounded_by``): a
    Schedule Late, once (with the write that recorded it)."""
    limit = int(threshold.total_seconds() * 1000)
    if tick.outcome is not Outcome.FIRED or tick.late_ms is None:
        return
    lone = kind_of(tick.execution_arn, deps) is Machine.FIRE  # (a batch's member: its ms)
    rounded = rounded_by(tick.scheduled_time, deps.settings) if lone else timedelta(0)
    if tick.late_ms - rounded // timedelta(milliseconds=1) <= limit:
        return
    late = Late(
        tick.action_id,
        tick.generation,
        tick.occurrence,
        tick.scheduled_time,
        tick.actual_time,
        tick.late_ms,
        limit,
    )
    deps.publisher.publish(late)


def record_failure(failure: FireFailure, deps: Records) -> RecordAnswer:
    """Record a fire that failed for good, once; its letter goes to the action's dead-letter
    queue first (a crash between the two sends it again, with the same idempotency key)."""
    if not failure.manual:
        failure = _as_handed_on(failure, deps)
    if failure.manual:
        return _record_manual_failure(failure, deps)
    recorded: list[tuple[Occurrence, FailurePolicy]] = []
    passed: list[Overlap] = []

    def failed(action: Action, now: datetime) -> Action:
        record = _failed_occurrence(failure, action.retry_count, now)
        if not recorded:  # a write that lost a race is tried again: one letter
            _dead_letter(action, failure, record, action.key_of(failure.occurrence), deps)
        recorded[:] = [(record, action.failure_policy)]
        action = with_fresh_calendar(action, now, deps, afresh=True)  # as it is now

        ended = failure.failed_at

        def after(a: Action) -> datetime | None:
            return after_fire(a, failure.scheduled_time, failure.occurrence, now, ended)[0]

        following, overlap = after_fire(
            action, failure.scheduled_time, failure.occurrence, now, ended
        )
        if action.failure_policy is FailurePolicy.STOP:  # it stops at this fire: nothing after
            overlap = NO_OVERLAP
        passed[:] = [overlap]
        held = None if following else holding_calendar(action, after)
        return action.failed(now, record, following, deps.limits, held, overlap)

    answer = _record(failure.key, _execution_of(failure, deps), failed, deps)
    if answer.outcome is not Done.RECORDED:
        return answer
    _announce_skips(failure.action_id, failure.generation, passed, deps)
    record, policy = recorded[0]
    return replace(answer, error=record.error, failure_policy=policy)


def _as_handed_on(failure: FireFailure, deps: Records) -> FireFailure:
    """A scheduled fire's report, as the fire in flight it was handed on to (ALLOW_ALL) when the
    record holds one for it claimed by the execution that reports it."""
    record = deps.records.get(failure.action_id)
    entry = handed_on_entry(
        record, failure.generation, failure.occurrence, _execution_of(failure, deps)
    )
    return failure if entry is None else replace(failure, manual=entry.number)


def _record(
    key: FireKey,
    execution_arn: str,
    ended: Callable[[Action, datetime], Action],
    deps: Records,
    current: Action | None = None,
    seat: NextSeat | None = None,
    on_repeat: Callable[[Action | None], object] | None = None,
) -> RecordAnswer:
    """Record the ending of the scheduled fire ``key`` by the execution ``execution_arn`` once
    (``writes.record``: only while the record is at that fire, and that execution holds its
    claim or is the one the record names), apply what waited for it, plan the next fire (into
    the seat's batch, or its own execution), then launch it or announce the end."""
    now = deps.clock.now()
    seen: list[Action | None] = [None]
    pending: list[Callable[[], None]] = []
    seated: list[str] = []

    def read(action: Action) -> None:
        seen[0] = action
        _unseat(seat, seated)  # a lost race: the take of the last try was not written

    def record(action: Action) -> Action:
        after, announcements = apply_deferred(ended(action, now), now, deps)
        pending[:] = announcements
        if after.status == Status.PENDING:
            into = seat.take(after) if seat is not None else None
            if into:
                seated.append(into)
            after = after.planned(into) if into else plan(after, now, deps)
        return after

    written: Written | None = None
    try:
        written = writes.record(deps.records, key, execution_arn, record, current, read)
    finally:
        if seat is not None and seated:
            seat.taken(written is not None)
    if written is None:
        if on_repeat is not None:
            on_repeat(seen[0])
        return RecordAnswer(key[0], Done.IGNORED, reason=_IGNORED)
    after = written.after
    if after.status == Status.PENDING and not seated:
        launch(after, now, deps)
    elif after.status == Status.COMPLETED:
        _publish_completed(after, after.history[-1].occurrence, deps)
    elif after.held_by_calendar is not None and after.generation != written.before.generation:
        deps.publisher.publish(Paused.of(after))  # held on its calendar: never ended on it
    _announce(pending)
    upcoming = after.execution_time if after.status == Status.PENDING else None
    return RecordAnswer(after.id, Done.RECORDED, str(after.status), execution_time=upcoming)


def _unseat(seat: NextSeat | None, seated: list[str]) -> None:
    if seat is not None and seated:
        seat.taken(False)
        seated.clear()


def _after(action: Action, tick: Tick, now: datetime) -> datetime | None:
    return after_fire(action, tick.scheduled_time, tick.occurrence, now, tick.actual_time)[0]


def _record_manual_failure(failure: FireFailure, deps: Records) -> RecordAnswer:
    action = deps.records.get(failure.action_id)
    fire = action.manual.fire(failure.manual) if action else None
    if action is None or fire is None:
        return RecordAnswer(failure.action_id, Done.IGNORED, reason=_IGNORED)
    record = _failed_occurrence(failure, fire.retries, deps.clock.now())  # its own count
    _dead_letter(action, failure, record, fire.idempotency_key, deps)
    return _record_manual(failure.action_id, failure.manual, record, fire.idempotency_key, deps)


def _dead_letter(
    action: Action, failure: FireFailure, record: Occurrence, key: str, deps: Records
) -> None:
    """The failed fire to the action's dead-letter queue, if it has one."""
    queue = action.policy.dead_letter_arn
    if queue is None:
        return
    letter = DeadLetter(
        action_id=action.id,
        action=action.action,
        group=action.group,
        generation=failure.generation,
        occurrence=failure.occurrence,
        scheduled_time=failure.scheduled_time,
        failed_at=record.actual_time,
        attempts=record.attempts,
        error=failure.error,
        error_message=_cause_message(failure.cause) or failure.error,
        idempotency_key=key,
        execution_arn=failure.execution_arn or failure.execution_name,
        trigger=str(failure.trigger),
        manual=failure.manual,
    )
    send_dead_letter(deps.targets, queue, letter)


def _record_manual(
    action_id: str,
    number: int,
    record: Occurrence,
    key: str,
    deps: Records,
) -> RecordAnswer:
    """Record a manual fire's ending once (``writes.record_manual``: only while it is in
    flight), counting it in the fire totals."""
    now = deps.clock.now()
    written = writes.record_manual(deps.records, action_id, number, record, key, now, deps.limits)
    if written is None:
        return RecordAnswer(action_id, Done.IGNORED, reason=_IGNORED)
    if written.after.backfill is not None:
        _go_on_backfilling(action_id, deps)
    return RecordAnswer(
        action_id, Done.RECORDED, str(written.after.status), manual=number, trigger=record.trigger
    )


def _go_on_backfilling(action_id: str, deps: Records) -> None:
    """A slot is free: the backfill waiting on the record runs its next occurrences. What
    cannot be done now (a lost race, a refused launch) the reconciler does: the fire is
    recorded either way."""
    try:
        continue_backfill(action_id, deps)
    except TickworkError as error:
        log.warning("backfill of %s goes on with the reconciler: %s", action_id, error)


_MOST_REASON = 300  # characters of why nothing ran a history entry keeps


def occurrence_of(tick: Tick) -> Occurrence:
    why = tick.result.get("reason") if tick.outcome is not Outcome.FIRED else None
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
        reason=why[:_MOST_REASON] if isinstance(why, str) and why else None,
    )


def _failed_occurrence(failure: FireFailure, retry_count: int, now: datetime) -> Occurrence:
    """The history entry of a failed fire: its time is when it failed (``failedAt``), however
    late the report is recorded — the dead letter and a report rebuilt from the entry say the
    same; a report without it is timed by its recording."""
    cause = _cause_message(failure.cause)
    return Occurrence(
        occurrence=failure.occurrence,
        scheduled_time=failure.scheduled_time,
        actual_time=now if failure.failed_at is None else min(failure.failed_at, now),
        attempts=retry_count + 1,
        outcome=Outcome.FAILED,
        error=f"{failure.error}: {cause}"[:1000] if cause else failure.error,
        trigger=failure.trigger,
        manual=failure.manual,
        execution=failure.execution_name or None,
    )


def _execution_of(ended: Tick | FireFailure, deps: Records) -> str:
    """The execution an ending names: its ARN, or — a tick or report made before they carried
    one, which only the fire machine's executions put on the bus — the fire machine's execution
    of its name."""
    return ended.execution_arn or deps.executions.execution_arn(ended.execution_name)


def _repeat(action: Action | None, tick: Tick, deps: Records) -> RecordAnswer:
    # (moved on past it — past the occurrences its overlap policy skipped too)
    moved_on = (
        action is not None
        and action.status == Status.PENDING
        and action.generation == tick.generation
        and action.occurrence > tick.occurrence
        and _recorded_in(action, tick)
    )
    if action is not None and moved_on and not _in_a_batch(action, deps):
        launch(action, deps.clock.now(), deps)
    elif action is not None and _completed_by(action, tick):
        # The write landed but the event may not have (a crash in between): at least once.
        _publish_completed(action, tick.occurrence, deps)
    return RecordAnswer(tick.action_id, Done.IGNORED, reason=_IGNORED)


def _in_a_batch(action: Action, deps: Records) -> bool:
    """Its next fire was planned into a batch (which starts it, or the reconciler does)."""
    return kind_of(action.execution_arn, deps) is Machine.BATCH


def _completed_by(action: Action, tick: Tick) -> bool:
    return action.status == Status.COMPLETED and _last_before_skips(action, tick)


def _recorded_in(action: Action, tick: Tick) -> bool:
    return any(h.occurrence == tick.occurrence and not h.manual for h in action.history)


def _last_before_skips(action: Action, tick: Tick) -> bool:
    """The tick's fire is the last one that ran: only its overlap policy's skips follow it."""
    after = [h for h in action.history if not h.manual and h.occurrence > tick.occurrence]
    return (
        action.generation == tick.generation
        and _recorded_in(action, tick)
        and all((h.reason or "").startswith(OVERLAP_REASON) for h in after)
    )


def _publish_completed(action: Action, occurrences: int, deps: Records) -> None:
    deps.publisher.publish(Completed(action.id, action.generation, occurrences))


def _announce_skips(action_id: str, generation: int, passed: list[Overlap], deps: Records) -> None:
    """A Schedule Skipped for each occurrence the overlap policy skipped, once (after the write
    that recorded them)."""
    for skipped in passed[0].skipped if passed else ():
        deps.publisher.publish(
            Skipped(
                action_id,
                generation,
                skipped.occurrence,
                skipped.scheduled_time,
                skipped.late_ms or 0,
                "OVERLAP",
                skipped.reason or OVERLAP_REASON,
            )
        )


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
