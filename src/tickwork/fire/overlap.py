"""Overlap policy ALLOW_ALL in a lone execution: a scheduled fire that failed transiently and is
about to be retried hands its place in the schedule on to the next occurrence, so that each
occurrence runs at its own time, beside the fire still being retried (docs/protocol.md,
"Overlap"). The fire goes on in the same execution, with the same idempotency key and
retry policy, as a fire in flight of its own (a manual entry of trigger SCHEDULED), and is
recorded beside the schedule. A fire a change waits for (inside the lock) keeps its place:
the change applies when it is recorded, as for any fire.

(The other policies decide when a fire is recorded: ``domain.action.following``.)
"""

from __future__ import annotations

from dataclasses import replace

from tickwork.domain.action import Action
from tickwork.domain.action.following import after_fire
from tickwork.domain.execution import same_execution
from tickwork.domain.fire import FireAttempt, Trigger
from tickwork.domain.fire_policy import OverlapPolicy
from tickwork.domain.steering import MAX_MANUAL_IN_FLIGHT, ManualFire
from tickwork.fire import writes
from tickwork.fire.launch import launch
from tickwork.fire.needs import Records
from tickwork.fire.planning import plan

__all__ = ["hand_on", "handed_on", "handed_on_entry"]


def hand_on(fire: FireAttempt, deps: Records) -> bool:
    """Hand the scheduled fire this execution claims on, if its action's overlap policy is
    ALLOW_ALL and a next occurrence exists; then start (or park) the next. Whether it was."""
    if fire.order.manual:
        return False
    now = deps.clock.now()

    def handing(current: Action) -> Action | None:
        if current.policy.overlap is not OverlapPolicy.ALLOW_ALL or not current.repeat:
            return None
        if len(current.manual.in_flight) >= MAX_MANUAL_IN_FLIGHT:
            return None  # as many fires in flight as a record keeps: this one holds its place
        if current.deferred is not None:
            return None  # a change waits for this fire: it holds its place until recorded
        # the next occurrence: one already due (a later attempt of a fire that kept its place)
        # runs at once, none passed over
        order = fire.order
        following, overlap = after_fire(current, order.fire_at, order.occurrence, now)
        if following is None:
            return None  # the last occurrence: nothing to run beside it
        holder, limit = fire.execution_arn, deps.limits.transitions
        handed = current.handed_on(now, holder, following, limit, overlap)
        return plan(handed, now, deps)

    written = writes.hand_on(deps.records, fire, handing)
    if written is None:
        return False
    launch(written.after, now, deps)
    return True


def handed_on(fire: FireAttempt, record: Action | None) -> FireAttempt | None:
    """The execution's attempt as the fire in flight it was handed on to (its order naming that
    manual entry), when the record holds one for its fire claimed by it; else None."""
    order = fire.order
    if record is None or order.manual:
        return None
    entry = handed_on_entry(record, order.generation, order.occurrence, fire.execution_arn)
    return None if entry is None else replace(fire, order=replace(order, manual=entry.number))


def handed_on_entry(
    record: Action | None, generation: int, occurrence: int, execution_arn: str
) -> ManualFire | None:
    """The fire in flight the scheduled fire (``generation``, ``occurrence``) was handed on to,
    claimed by ``execution_arn``."""
    if record is None:
        return None
    return next(
        (
            entry
            for entry in record.manual.in_flight
            if entry.trigger is Trigger.SCHEDULED
            and (entry.generation, entry.occurrence) == (generation, occurrence)
            and same_execution(entry.claimed_by, execution_arn)
        ),
        None,
    )
