"""The lock protects the imminent fire, never the schedule: asking for a change inside it.

Inside the lock (``LockSeconds`` before a fire, or while it runs) the imminent fire is fixed.
A change to a one-off there is refused: its only fire is that one. A change to a recurrence is
accepted and kept on the record (``Action.deferred``); ``deferral.apply_deferred`` applies it
as soon as the imminent fire is recorded, so no schedule is ever unmanageable, whatever its period.
"""

from __future__ import annotations

from datetime import datetime

from tickwork.answers import AppliesAfter, ChangeAnswer, Done
from tickwork.domain.action import ACTIVE, Action, Status
from tickwork.domain.errors import ActionLocked
from tickwork.domain.steering import Deferred
from tickwork.domain.times import iso
from tickwork.fire import writes
from tickwork.steering.needs import Steers

__all__ = ["defer", "is_locked", "refuse_if_locked_one_off"]


def is_locked(action: Action, now: datetime, deps: Steers) -> bool:
    return action.status in ACTIVE and action.is_locked(now, deps.settings.lock)


def refuse_if_locked_one_off(action: Action, now: datetime, deps: Steers) -> None:
    """A one-off inside its lock cannot be changed: its only fire is the imminent one."""
    if not action.repeat and is_locked(action, now, deps):
        raise ActionLocked(
            action.id,
            iso(action.execution_time or now),
            int(deps.settings.lock.total_seconds()),
        )


def defer(action: Action, change: Deferred, now: datetime, deps: Steers) -> ChangeAnswer:
    """Keep ``change`` on the record until the imminent fire is recorded; the answer says so."""
    writes.defer(deps.records, action, change, now)
    fire_time = action.execution_time or now
    what = str(change.kind).lower()
    return ChangeAnswer(
        action.id,
        Done.DEFERRED,
        str(action.status),
        change=change.kind,
        applies_after=AppliesAfter(action.occurrence, fire_time),
        message=(
            f"occurrence {action.occurrence} fires at {iso(fire_time)}, inside the "
            f"{int(deps.settings.lock.total_seconds())}s lock, and happens as planned; "
            f"this {what} applies from the next occurrence on"
            if action.status == Status.PENDING
            else f"occurrence {action.occurrence} is firing now and completes as planned; "
            f"this {what} applies from the next occurrence on"
        ),
    )
