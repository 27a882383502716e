"""After a fire: record the occurrence, then start the next recurrence or finish.

Driven by tickwork's own "Schedule Tick" and "Schedule Failed" events (``Tick`` and
``FireFailure`` of the fire contract). Each is keyed on (action, generation, occurrence): a
repeated or stale delivery changes nothing, except that a record already moved on to its next
occurrence makes sure that occurrence's execution runs (repairing a crash between the write
and the start).
"""

from __future__ import annotations

import json
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import ACTIVE, Action, Occurrence, Status
from tickwork.domain.errors import ActionConflict
from tickwork.domain.events import DetailType
from tickwork.domain.fire import FireFailure, FireKey, Outcome, Tick
from tickwork.domain.times import ceil_ms, iso
from tickwork.usecases.launch import launch, planned_execution

__all__ = ["record_failure", "record_tick"]

_WRITE_ATTEMPTS = 3
_IGNORED = "stale or repeated delivery"


def record_tick(tick: Tick, deps: Dependencies) -> dict[str, Any]:
    for _ in range(_WRITE_ATTEMPTS):
        action = deps.repository.get(tick.action_id)
        if action is None or not _is_current(action, tick.key):
            return _repeat(action, tick, deps)
        now = deps.clock.now()
        record = Occurrence(
            occurrence=tick.occurrence,
            scheduled_time=tick.scheduled_time,
            actual_time=tick.actual_time,
            attempts=tick.attempts,
            outcome=tick.outcome,
            late_ms=tick.late_ms,
        )
        following = None
        if tick.outcome is not Outcome.NO_ACTION:
            # Occurrences missed in an outage that the catch-up policy does not run are
            # passed over here: the chain resumes at the first one still worth a fire.
            following = action.schedule.next_fire_time(
                tick.scheduled_time,
                tick.occurrence,
                not_before=action.catch_up.resume_from(now),
            )
        updated = action.fired(
            now, record, following and ceil_ms(following), tick.result, deps.limits
        )
        if updated.status == Status.PENDING:
            updated = updated.planned(planned_execution(updated, deps)[1])
        try:
            deps.repository.save(updated, expected_version=action.version)
        except ActionConflict:
            continue
        if updated.status == Status.PENDING:
            launch(updated, now, deps)
        elif updated.status == Status.COMPLETED:
            _publish_completed(updated, tick.occurrence, deps)
        return {
            "id": updated.id,
            "outcome": "recorded",
            "status": str(updated.status),
            "executionTime": iso(following) if following else None,
        }
    raise ActionConflict(tick.action_id, f"could not record occurrence {tick.occurrence}")


def record_failure(failure: FireFailure, deps: Dependencies) -> dict[str, Any]:
    for _ in range(_WRITE_ATTEMPTS):
        action = deps.repository.get(failure.action_id)
        if action is None or not _is_current(action, failure.key):
            return {"id": failure.action_id, "outcome": "ignored", "reason": _IGNORED}
        now = deps.clock.now()
        cause = _cause_message(failure.cause)
        record = Occurrence(
            occurrence=failure.occurrence,
            scheduled_time=failure.scheduled_time,
            actual_time=now,
            attempts=action.retry_count + 1,
            outcome=Outcome.FAILED,
            error=f"{failure.error}: {cause}"[:1000] if cause else failure.error,
        )
        try:
            deps.repository.save(
                action.failed(now, record, deps.limits), expected_version=action.version
            )
        except ActionConflict:
            continue
        return {"id": action.id, "outcome": "recorded", "status": "FAILED", "error": record.error}
    raise ActionConflict(
        failure.action_id, f"could not record the failure of occurrence {failure.occurrence}"
    )


def _is_current(action: Action, key: FireKey) -> bool:
    return action.status in ACTIVE and action.fire_key == key


def _repeat(action: Action | None, tick: Tick, deps: Dependencies) -> dict[str, Any]:
    moved_on = (
        action is not None
        and action.status == Status.PENDING
        and action.fire_key == (tick.action_id, tick.generation, tick.occurrence + 1)
    )
    if action is not None and moved_on:
        launch(action, deps.clock.now(), deps)
    elif action is not None and _completed_by(action, tick):
        # The write landed but the event may not have (a crash in between): at least once.
        _publish_completed(action, tick.occurrence, deps)
    return {"id": tick.action_id, "outcome": "ignored", "reason": _IGNORED}


def _completed_by(action: Action, tick: Tick) -> bool:
    return (
        action.status == Status.COMPLETED
        and action.generation == tick.generation
        and bool(action.history)
        and action.history[-1].occurrence == tick.occurrence
    )


def _publish_completed(action: Action, occurrences: int, deps: Dependencies) -> None:
    deps.publisher.publish(
        DetailType.COMPLETED,
        {"id": action.id, "generation": action.generation, "occurrences": occurrences},
    )


def _cause_message(cause: str | None) -> str:
    """A Lambda error's Cause is the JSON of {errorType, errorMessage, ...}: keep the message."""
    if cause is None:
        return ""
    try:
        parsed = json.loads(cause)
    except ValueError:
        return cause
    return str(parsed.get("errorMessage", cause)) if isinstance(parsed, dict) else cause
