"""What waited for the imminent fire: a change asked for inside the lock (``lock.defer``)
applies as soon as that fire is recorded — a cancel, a pause, or an update that replaces the
schedule (checked again as a Start would be: valid when asked for, it may no longer be).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from tickwork.domain.action import ACTIVE, LIVE, Action, Status
from tickwork.domain.announcements import Paused, Rejected, Stopped
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.steering import ChangeKind, Deferred
from tickwork.fire.needs import Records
from tickwork.fire.rejections import announce_rejected

__all__ = ["apply_deferred"]


def apply_deferred(
    updated: Action, now: datetime, deps: Records
) -> tuple[Action, list[Callable[[], None]]]:
    """After the imminent fire is recorded, apply the change that waited for it. Returns the
    record to write and what to announce once it is written."""
    change = updated.deferred
    if change is None:
        return updated, []
    base = replace(updated, deferred=None)
    if change.kind is ChangeKind.CANCEL:
        # The cancel was answered "applies after the imminent fire": it does, even when that
        # fire was the last (the action ends CANCELLED, its history whole). A fire that ended
        # it FAILED or NO_ACTION keeps that status: it is a signal for someone to look at.
        if base.status not in LIVE and base.status is not Status.COMPLETED:
            return base, []
        reason = "cancelled as asked inside the lock, after the fire it waited for"
        cancelled = base.cancelled(now, deps.limits, reason)
        stopped = Stopped(cancelled.id, updated.generation)
        return cancelled, [lambda: deps.publisher.publish(stopped)]
    if change.kind is ChangeKind.PAUSE:
        if base.status not in ACTIVE:
            return base, []
        paused = base.paused(now, change.note, deps.limits)
        announced = Paused(paused.id, paused.generation, change.note)
        return paused, [lambda: deps.publisher.publish(announced)]
    return _updated(base, change, now, deps)


def _updated(
    base: Action, change: Deferred, now: datetime, deps: Records
) -> tuple[Action, list[Callable[[], None]]]:
    # Here, not at the top: only a deferred update needs the Start request's models (thirty
    # fields and their checks), which the tick function does not build at its cold start.
    from tickwork.fire.start_record import announce_started, check_start, scheduled_action

    detail = change.request or {}
    try:
        # Admitted (its template checked) when it was asked for; its fires check again.
        checked = check_start(detail, change.event_id, now, deps, admit=False)
    except ValidationFailed as refused:
        # Valid when asked for, no longer (a one-off time that has passed): the schedule goes
        # on as it was, and the sender is told.
        rejection = Rejected(
            action_id=base.id,
            request="deferred update",
            reason=type(refused).__name__,
            message=str(refused),
            problems=[p.as_dict() for p in refused.problems],
            event_id=change.event_id,
        )
        return base, [lambda: announce_rejected(rejection, deps)]
    replaced = scheduled_action(checked, base, now, change.spec_hash or "", change.event_id, deps)
    return replaced, [lambda: announce_started(replaced, deps)]
