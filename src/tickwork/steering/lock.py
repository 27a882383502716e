"""The lock guards changes to the schedule, never a cancel or a pause: asking inside it.

Inside the lock (the action's ``lockSeconds`` before a fire, else the stack's ``LockSeconds``,
or while it runs) the imminent fire's schedule is fixed. A change to a one-off there is refused:
its only fire is that one. A change to a recurrence is accepted and kept on the record
(``Action.deferred``); ``deferral.apply_deferred`` applies it as soon as the imminent fire is
recorded, so no schedule is ever unmanageable, whatever its period.

A cancel or a pause wins until the fire is claimed, wherever its fire waits (``until_claimed``):
the claim is the one point that decides. After it, a one-off's is refused (``FireUnderWay``) and
a recurrence's applies from the next occurrence on.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tickwork.answers import AppliesAfter, ChangeAnswer, Done
from tickwork.domain.action import ACTIVE, Action, Status
from tickwork.domain.errors import ActionLocked, FireUnderWay
from tickwork.domain.steering import Deferred
from tickwork.domain.times import iso
from tickwork.fire import writes
from tickwork.steering.needs import Steers

__all__ = ["defer", "is_locked", "lock_of", "refuse_if_locked_one_off", "until_claimed"]


def lock_of(action: Action, deps: Steers) -> timedelta:
    """How long before its fires the action's schedule is fixed."""
    return action.policy.lock(deps.settings.lock)


def is_locked(action: Action, now: datetime, deps: Steers) -> bool:
    return action.status in ACTIVE and action.is_locked(now, deps.settings.lock)


def until_claimed(
    action: Action, change: Deferred, now: datetime, deps: Steers
) -> ChangeAnswer | None:
    """A cancel or pause of a fire already claimed: a one-off's is refused (its only fire is
    under way), a recurrence's waits for that fire; None when the fire is not claimed (the
    change applies now, whatever the lock)."""
    if not action.is_claimed:
        return None
    if not action.repeat:
        raise FireUnderWay(
            action.id,
            action.occurrence,
            iso(action.execution_time or now),
            str(change.kind).lower(),
        )
    return defer(action, change, now, deps)


def refuse_if_locked_one_off(action: Action, now: datetime, deps: Steers) -> None:
    """A one-off inside its lock cannot be changed: its only fire is the imminent one."""
    if not action.repeat and is_locked(action, now, deps):
        raise ActionLocked(
            action.id,
            iso(action.execution_time or now),
            int(lock_of(action, deps).total_seconds()),
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
            f"{int(lock_of(action, deps).total_seconds())}s lock, and happens as planned; "
            f"this {what} applies from the next occurrence on"
            if action.status == Status.PENDING
            else f"occurrence {action.occurrence} is under way (claimed) and completes as planned; "
            f"this {what} applies from the next occurrence on"
        ),
    )
