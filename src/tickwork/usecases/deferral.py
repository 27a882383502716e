"""The lock protects the imminent fire, never the schedule.

Inside the lock (``LockSeconds`` before a fire, or while it runs) the imminent fire is fixed.
A change to a one-off there is refused: its only fire is that one. A change to a recurrence is
accepted and kept on the record (``Action.deferred``); it applies as soon as the imminent fire
is recorded, so no schedule is ever unmanageable, whatever its period.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import ACTIVE, LIVE, Action, Status
from tickwork.domain.errors import ActionLocked, ValidationFailed
from tickwork.domain.events import DetailType
from tickwork.domain.steering import ChangeKind, Deferred
from tickwork.domain.times import iso

__all__ = ["defer", "is_locked", "refuse_if_locked_one_off", "settle"]


def is_locked(action: Action, now: datetime, deps: Dependencies) -> bool:
    return action.status in ACTIVE and action.is_locked(now, deps.settings.lock)


def refuse_if_locked_one_off(action: Action, now: datetime, deps: Dependencies) -> None:
    """A one-off inside its lock cannot be changed: its only fire is the imminent one."""
    if not action.repeat and is_locked(action, now, deps):
        raise ActionLocked(
            action.id,
            iso(action.execution_time or now),
            int(deps.settings.lock.total_seconds()),
        )


def defer(action: Action, change: Deferred, now: datetime, deps: Dependencies) -> dict[str, Any]:
    """Keep ``change`` on the record until the imminent fire is recorded; the answer says so."""
    deps.repository.save(action.deferring(now, change), expected_version=action.version)
    fire_time = iso(action.execution_time or now)
    what = str(change.kind).lower()
    return {
        "id": action.id,
        "outcome": "deferred",
        "status": str(action.status),
        "change": str(change.kind),
        "appliesAfter": {"occurrence": action.occurrence, "fireTime": fire_time},
        "message": (
            f"occurrence {action.occurrence} fires at {fire_time}, inside the "
            f"{int(deps.settings.lock.total_seconds())}s lock, and happens as planned; "
            f"this {what} applies from the next occurrence on"
            if action.status == Status.PENDING
            else f"occurrence {action.occurrence} is firing now and completes as planned; "
            f"this {what} applies from the next occurrence on"
        ),
    }


def settle(
    updated: Action, now: datetime, deps: Dependencies
) -> tuple[Action, list[Callable[[], None]]]:
    """After the imminent fire is recorded, apply the change that waited for it. Returns the
    record to write and what to announce once it is written."""
    change = updated.deferred
    if change is None:
        return updated, []
    base = updated.without_deferred()
    if change.kind is ChangeKind.CANCEL:
        # The cancel was answered "applies after the imminent fire": it does, even when that
        # fire was the last (the action ends CANCELLED, its history whole). A fire that ended
        # it FAILED or NO_ACTION keeps that status: it is a signal for someone to look at.
        if base.status not in LIVE and base.status is not Status.COMPLETED:
            return base, []
        reason = "cancelled as asked inside the lock, after the fire it waited for"
        cancelled = base.cancelled(now, deps.limits, reason)
        stopped = {"id": cancelled.id, "generation": updated.generation}
        return cancelled, [lambda: deps.publisher.publish(DetailType.STOPPED, stopped)]
    if change.kind is ChangeKind.PAUSE:
        if base.status not in ACTIVE:
            return base, []
        paused = base.paused(now, change.note, deps.limits)
        announced = {"id": paused.id, "generation": paused.generation, "note": change.note}
        return paused, [lambda: deps.publisher.publish(DetailType.PAUSED, announced)]
    return _updated(base, change, now, deps)


def _updated(
    base: Action, change: Deferred, now: datetime, deps: Dependencies
) -> tuple[Action, list[Callable[[], None]]]:
    # Here, not at the top: only a deferred update needs the Start request's models (pydantic).
    from tickwork.usecases.start import (
        StartCommand,
        announce_started,
        check_start,
        scheduled_action,
    )

    detail = change.request or {}
    try:
        checked = check_start(StartCommand(detail, change.event_id), now, deps)
    except ValidationFailed as refused:
        # Valid when asked for, no longer (a one-off time that has passed): the schedule goes
        # on as it was, and the sender is told.
        rejection = {
            "id": base.id,
            "request": "deferred update",
            "reason": type(refused).__name__,
            "message": str(refused),
            "problems": [p.as_dict() for p in refused.problems],
        }
        return base, [lambda: deps.publisher.publish(DetailType.REJECTED, rejection)]
    replaced = scheduled_action(checked, base, now, change.spec_hash or "", change.event_id, deps)
    return replaced, [lambda: announce_started(replaced, deps)]
