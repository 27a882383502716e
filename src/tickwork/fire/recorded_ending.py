"""The ending of a fire an execution already recorded, rebuilt from the record to be put on the
bus again: a batch's task or a lone fire's Fulfill retried after a crash, or after the bus
refused the event, between recording the fire and publishing it. docs/protocol.md, "A lone
fire" and "A batched fire".

The record's history names the execution that ran each occurrence: only an occurrence this very
execution recorded is rebuilt (the same tick, its proof made anew: at least once, with the same
idempotency key); the fire is never run again.
"""

from __future__ import annotations

from tickwork.domain.action import Action, Occurrence
from tickwork.domain.execution import name_of
from tickwork.domain.fire import FireFailure, FireOrder, Outcome, Tick, Trigger
from tickwork.fire.needs import Launches
from tickwork.fire.proofs import caught_failure, with_proof

__all__ = ["ending_recorded_by", "recorded_ending"]


def recorded_ending(
    order: FireOrder, execution_arn: str, deps: Launches
) -> tuple[Action, Occurrence] | None:
    """The record and its history entry of the fire ``order`` names, when the execution
    ``execution_arn`` recorded its ending (a skip too); None when it did not."""
    action = deps.records.get(order.action_id)
    if action is None or action.generation != order.generation:
        return None
    name = name_of(execution_arn)
    ran = [
        h
        for h in action.history
        if h.occurrence == order.occurrence
        and h.execution == name
        # (a scheduled fire handed on is recorded as the fire in flight it became)
        and (h.manual == order.manual or (not order.manual and h.trigger is Trigger.SCHEDULED))
    ]
    return (action, ran[-1]) if ran else None


def ending_recorded_by(
    order: FireOrder, execution_arn: str, deps: Launches
) -> Tick | FireFailure | None:
    """The proved tick or failure report of the fire ``order`` names, when the execution
    ``execution_arn`` recorded it; None when it did not (or recorded a skip, which announced
    itself)."""
    found = recorded_ending(order, execution_arn, deps)
    if found is None or found[1].outcome is Outcome.SKIPPED:
        return None
    action, record = found
    name = name_of(execution_arn)
    if record.outcome is Outcome.FAILED:
        error, _, cause = (record.error or "").partition(": ")
        error = error or "States.Unknown"
        return caught_failure(order, error, cause or None, execution_arn, deps, record.actual_time)
    key = _key(action, order)
    if key is None:
        return None
    tick = Tick(
        action_id=action.id,
        generation=order.generation,
        occurrence=order.occurrence,
        scheduled_time=record.scheduled_time,
        actual_time=record.actual_time,
        attempts=record.attempts,
        action=action.action,
        outcome=record.outcome,
        execution_name=name,
        execution_arn=execution_arn,
        idempotency_key=key,
        result=_result(action, record),
        data=action.data,
        metadata=action.metadata,
        manual=record.manual,
        trigger=record.trigger,
        recorded=True,
    )
    return with_proof(tick, deps)


def _key(action: Action, order: FireOrder) -> str | None:
    """The fire's idempotency key: the schedule's for its occurrence, or a manual fire's own."""
    if not order.manual:
        return action.key_of(order.occurrence)
    asked = [m for m in action.manual.asked if m.number == order.manual]
    return asked[-1].idempotency_key if asked else None


def _result(action: Action, record: Occurrence) -> dict[str, object]:
    """The target's answer, while the record still holds it (it is the latest fire's)."""
    latest = bool(action.history) and action.history[-1] is record
    return (action.last_result or {}) if latest else {}
