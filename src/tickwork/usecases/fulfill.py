"""One fire: fence, guard the clock, claim, dispatch to the action type's fulfillment.

Called by the state machine's Fulfill task after its Wait. Its return value is the detail of
the "Schedule Tick" event the machine emits next. Raises, by name for the machine to match:
``ActionSuperseded`` / ``WaitContinued`` / ``OccurrenceSkipped`` (end quietly),
``ConcurrencyLimited`` (waits for a slot, retried with jitter), ``TransientFulfillmentError``
(retried with backoff), ``PermanentFulfillmentError`` (not retried, recorded FAILED).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, NoReturn

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action, Status
from tickwork.domain.announcements import Skipped, Tampered
from tickwork.domain.errors import (
    ActionConflict,
    ActionSuperseded,
    ConcurrencyLimited,
    OccurrenceSkipped,
    PermanentFulfillmentError,
    TransientFulfillmentError,
    ValidationFailed,
    WaitContinued,
)
from tickwork.domain.fire import FireAttempt, Outcome, Tick
from tickwork.domain.times import iso
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.usecases.launch import launch, planned_execution
from tickwork.usecases.record import record_tick
from tickwork.usecases.sealing import seal_holds

__all__ = ["fulfil_claimed", "fulfill_fire"]

_CLAIM_ATTEMPTS = 3
_TAMPERED = "the record's seal does not match: it was altered outside tickwork; nothing ran"


def fulfill_fire(fire: FireAttempt, deps: Dependencies) -> Tick:
    return fulfil_claimed(fire, deps)[0]


def fulfil_claimed(
    fire: FireAttempt, deps: Dependencies, read: Action | None = None
) -> tuple[Tick, Action]:
    """The fire's tick, and its record as this execution's claim left it (the version a write
    recording the tick is fenced on). ``read``: the record as the caller just read it, if it
    has (a batch reads its fires' records first): a stale one only costs the claim a retry."""
    if fire.order.manual:
        action, key = _claim_manual(fire, deps)
        return _run(fire, action, key, deps.clock.now(), deps), action
    action = _current(fire, deps, read)
    _wait_until_due(fire, action, deps)
    now = deps.clock.now()
    if not action.catch_up.runs(fire.order.fire_at, now):
        _skip(fire, action, now, deps)
    action = _claim(fire, action, deps)
    return _run(fire, action, action.key_of(fire.order.occurrence), now, deps), action


def _run(fire: FireAttempt, action: Action, key: str, now: datetime, deps: Dependencies) -> Tick:
    """The claimed fire: check the seal, validate, fulfill in a slot, and make the tick."""
    if not seal_holds(action, deps):
        # Altered outside tickwork: what it would run is not what was scheduled.
        deps.publisher.publish(Tampered(action.id, action.generation, action.occurrence))
        # Never pass altered data on to workers: the tick carries none.
        tampered = {"reason": _TAMPERED, "tampered": True}
        return _tick(fire, action, key, now, Outcome.NO_ACTION, tampered, withhold_payload=True)
    try:
        fulfillment = deps.registry.get(action.action)
        data = deps.registry.validate(action.action, action.data)
    except ValidationFailed as refused:
        # A type or payload that passed at creation but not now: the record was altered
        # outside tickwork. Nothing runs, and nothing is retried.
        return _tick(fire, action, key, now, Outcome.NO_ACTION, {"reason": str(refused)})
    waits = 0  # the retries of this execution that were waits for a slot, not attempts
    try:
        with _slot(action.action, fire.execution_name, deps) as waits:
            request = FulfillmentRequest(
                action_id=action.id,
                action=action.action,
                occurrence=fire.order.occurrence,
                scheduled_time=fire.order.fire_at,
                data=data,
                idempotency_key=key,
                metadata=action.metadata,
                attempt=fire.attempt - waits,
                role_arn=action.role_arn,
            )
            result = fulfillment.fulfill(request)
    except (TransientFulfillmentError, PermanentFulfillmentError) as error:
        _note_failure(fire, error, waits, deps)
        raise
    return _tick(fire, action, key, deps.clock.now(), Outcome.FIRED, result, slot_waits=waits)


def _current(fire: FireAttempt, deps: Dependencies, read: Action | None = None) -> Action:
    order = fire.order
    action = read or deps.records.get(order.action_id)
    if action is None:
        raise ActionSuperseded(order.action_id, "the record no longer exists")
    if action.fire_key != order.key:
        raise ActionSuperseded(
            order.action_id,
            f"record is at generation {action.generation} occurrence {action.occurrence}, "
            f"this execution is for generation {order.generation} occurrence {order.occurrence}",
        )
    holders = {fire.execution_name, order.handed_from}  # a batch's claim is handed on
    mine = action.status == Status.IN_PROGRESS and action.claimed_by in holders
    if action.status != Status.PENDING and not mine:
        raise ActionSuperseded(order.action_id, f"record is {action.status}")
    return action


def _claim_manual(fire: FireAttempt, deps: Dependencies) -> tuple[Action, str]:
    """A fire asked for by hand: claimed on its own entry of the record, fenced on the version,
    so it runs once however often it is delivered; the schedule's own fire is untouched."""
    order = fire.order
    for _ in range(_CLAIM_ATTEMPTS):
        action = deps.records.get(order.action_id)
        manual = action.manual.fire(order.manual) if action is not None else None
        if action is None or manual is None:
            raise ActionSuperseded(order.action_id, f"manual fire {order.manual} is not asked for")
        if manual.claimed_by == fire.execution_name:
            return action, manual.idempotency_key
        if manual.claimed_by is not None:
            raise ActionSuperseded(
                order.action_id, f"manual fire {order.manual} is run by {manual.claimed_by}"
            )
        claimed = action.manual_claimed(deps.clock.now(), order.manual, fire.execution_name)
        try:
            deps.records.save(claimed, expected_version=action.version)
        except ActionConflict:
            continue
        return claimed, manual.idempotency_key
    raise ActionConflict(order.action_id, f"could not claim after {_CLAIM_ATTEMPTS} attempts")


def _wait_until_due(fire: FireAttempt, action: Action, deps: Dependencies) -> None:
    """Never fire early: sleep off a short early wake; continue a longer one in a new leg (an
    execution waits to its fire, so this is a guard, not a plan)."""
    order = fire.order
    fire_at = order.fire_at
    early = fire_at - deps.clock.now()
    if early > deps.settings.early_tolerance:
        arn = launch(action, deps.clock.now(), deps, leg=order.leg + 1, repair=order.repair)
        # If the record moved on meanwhile, the new leg finds out and ends quietly.
        with suppress(ActionConflict):
            if arn is not None:
                deps.records.save(action.with_execution(deps.clock.now(), arn), action.version)
        raise WaitContinued(order.action_id, order.leg + 1, iso(fire_at))
    while early > timedelta(0):
        deps.clock.sleep(early.total_seconds())
        early = fire_at - deps.clock.now()


def _claim(fire: FireAttempt, action: Action, deps: Dependencies) -> Action:
    """PENDING → IN_PROGRESS, fenced on the version read; a retry of this execution passes."""
    for _ in range(_CLAIM_ATTEMPTS):
        if action.status == Status.IN_PROGRESS and action.claimed_by == fire.execution_name:
            return action
        if action.status == Status.IN_PROGRESS:
            claimed = _taken_over(fire, action, deps)
        else:
            claimed = action.claimed(deps.clock.now(), fire.execution_name, deps.limits.transitions)
        try:
            deps.records.save(claimed, expected_version=action.version)
            return claimed
        except ActionConflict:
            action = _current(fire, deps)
    raise ActionConflict(fire.order.action_id, f"could not claim after {_CLAIM_ATTEMPTS} attempts")


def _taken_over(fire: FireAttempt, action: Action, deps: Dependencies) -> Action:
    """The claim of the batch that handed this fire over (``_current`` let no other through),
    taken by this execution: its start may come before the batch moved the claim, or the
    batch may have crashed in between."""
    name, arn = planned_execution(action, deps)
    moved = action.with_execution(deps.clock.now(), arn) if name == fire.execution_name else action
    return replace(moved, claimed_by=fire.execution_name)


def _skip(fire: FireAttempt, action: Action, now: datetime, deps: Dependencies) -> NoReturn:
    """Record a missed occurrence as SKIPPED, schedule the next, end this execution."""
    policy = str(action.catch_up.policy)
    reason = {"reason": f"missed; catch-up {policy}"}
    skipped = _tick(fire, action, action.key_of(action.occurrence), now, Outcome.SKIPPED, reason)
    record_tick(skipped, deps)
    deps.publisher.publish(
        Skipped(
            action.id,
            action.generation,
            action.occurrence,
            skipped.scheduled_time,
            skipped.late_ms,
            policy,
        )
    )
    late = (now - fire.order.fire_at).total_seconds()
    raise OccurrenceSkipped(action.id, action.occurrence, late, policy)


@contextmanager
def _slot(action_type: str, holder: str, deps: Dependencies) -> Iterator[int]:
    """Hold one of the action type's concurrency slots while it runs, if it has a limit, and
    give how many times this execution waited for one (each wait was a retry of the state).

    All taken → ``ConcurrencyLimited``: the machine retries with jitter; the fire stays
    claimed, so it is neither lost nor run twice.
    """
    limit = deps.settings.concurrency_limits.get(action_type)
    if limit is None:
        yield 0
        return
    slot = deps.slots.acquire(
        action_type, limit, holder, deps.clock.now(), deps.settings.slot_lease
    )
    if slot is None:
        raise ConcurrencyLimited(action_type, limit)
    try:
        yield deps.slots.waits(holder)
    finally:
        deps.slots.release(slot, holder)


def _note_failure(fire: FireAttempt, error: Exception, waits: int, deps: Dependencies) -> None:
    """Record the attempt's error on the record (best effort: the machine records FAILED), with
    the fulfilment attempts before it (the state's retries less its waits for a slot)."""
    action = deps.records.get(fire.order.action_id)
    if action is None or action.claimed_by != fire.execution_name:
        return
    noted = action.noted_failure(
        deps.clock.now(), f"{type(error).__name__}: {error}", fire.attempt - 1 - waits
    )
    with suppress(ActionConflict):
        deps.records.save(noted, expected_version=action.version)


def _tick(
    fire: FireAttempt,
    action: Action,
    key: str,
    now: datetime,
    outcome: Outcome,
    result: dict[str, Any],
    withhold_payload: bool = False,
    slot_waits: int = 0,
) -> Tick:
    return Tick(
        action_id=action.id,
        generation=fire.order.generation,
        occurrence=fire.order.occurrence,
        scheduled_time=fire.order.fire_at,
        actual_time=now,
        attempts=fire.attempt - slot_waits,
        slot_waits=slot_waits,
        action=action.action,
        outcome=outcome,
        execution_name=fire.execution_name,
        idempotency_key=key,
        manual=fire.order.manual,
        trigger=fire.order.trigger,
        result=result,
        data={} if withhold_payload else action.data,
        metadata={} if withhold_payload else action.metadata,
    )
