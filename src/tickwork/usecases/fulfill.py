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
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, NoReturn

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action, Status
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
from tickwork.domain.times import iso, parse_iso
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.usecases.launch import launch
from tickwork.usecases.record import FireReport, record_tick
from tickwork.usecases.sealing import seal_holds

__all__ = ["FireInput", "fulfill_fire"]

_CLAIM_ATTEMPTS = 3
_TAMPERED = "the record's seal does not match: it was altered outside tickwork; nothing ran"


@dataclass(frozen=True)
class FireInput:
    id: str
    generation: int
    occurrence: int
    leg: int
    fire_at: str
    execution_name: str
    retry_count: int = 0
    repair: int = 0

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> FireInput:
        fire = payload["input"]
        return cls(
            id=fire["id"],
            generation=int(fire["generation"]),
            occurrence=int(fire["occurrence"]),
            leg=int(fire.get("leg", 0)),
            fire_at=fire["fireAt"],
            execution_name=payload["executionName"],
            retry_count=int(payload.get("retryCount", 0)),
            repair=int(fire.get("repair", 0)),
        )


def fulfill_fire(fire: FireInput, deps: Dependencies) -> dict[str, Any]:
    action = _current(fire, deps)
    _wait_until_due(fire, action, deps)
    now = deps.clock.now()
    scheduled = parse_iso(fire.fire_at)
    if not action.catch_up.runs(scheduled, now):
        _skip(fire, action, now, deps)
    action = _claim(fire, action, deps)
    if not seal_holds(action, deps):
        # Altered outside tickwork: what it would run is not what was scheduled.
        deps.publisher.publish(
            "Schedule Tampered",
            {"id": action.id, "generation": fire.generation, "occurrence": fire.occurrence},
        )
        tick = _tick(fire, action, now, "NO_ACTION", {"reason": _TAMPERED, "tampered": True})
        return {**tick, "data": {}, "metadata": {}}  # never pass altered data on to workers
    try:
        fulfillment = deps.registry.get(action.action)
        data = deps.registry.validate(action.action, action.data)
    except ValidationFailed as refused:
        # A type or payload that passed at creation but not now: the record was altered
        # outside tickwork. Nothing runs, and nothing is retried.
        return _tick(fire, action, now, "NO_ACTION", {"reason": str(refused)})
    request = FulfillmentRequest(
        action_id=action.id,
        action=action.action,
        occurrence=fire.occurrence,
        scheduled_time=scheduled,
        data=data,
        metadata=action.metadata,
        attempt=fire.retry_count + 1,
    )
    try:
        with _slot(action.action, fire.execution_name, deps):
            result = fulfillment.fulfill(request)
    except (TransientFulfillmentError, PermanentFulfillmentError) as error:
        _note_failure(action.id, fire, error, deps)
        raise
    return _tick(fire, action, deps.clock.now(), "FIRED", result)


def _current(fire: FireInput, deps: Dependencies) -> Action:
    action = deps.repository.get(fire.id)
    if action is None:
        raise ActionSuperseded(fire.id, "the record no longer exists")
    if (action.generation, action.occurrence) != (fire.generation, fire.occurrence):
        raise ActionSuperseded(
            fire.id,
            f"record is at generation {action.generation} occurrence {action.occurrence}, "
            f"this execution is for generation {fire.generation} occurrence {fire.occurrence}",
        )
    mine = action.status == Status.IN_PROGRESS and action.claimed_by == fire.execution_name
    if action.status != Status.PENDING and not mine:
        raise ActionSuperseded(fire.id, f"record is {action.status}")
    return action


def _wait_until_due(fire: FireInput, action: Action, deps: Dependencies) -> None:
    """Never fire early: sleep off a short early wake; continue a long wait in a new leg."""
    fire_at = parse_iso(fire.fire_at)
    early = fire_at - deps.clock.now()
    if early > deps.settings.early_tolerance:
        arn = launch(action, deps.clock.now(), deps, leg=fire.leg + 1, repair=fire.repair)
        # If the record moved on meanwhile, the new leg finds out and ends quietly.
        with suppress(ActionConflict):
            deps.repository.save(action.with_execution(deps.clock.now(), arn), action.version)
        raise WaitContinued(fire.id, fire.leg + 1, iso(fire_at))
    while early > timedelta(0):
        deps.clock.sleep(early.total_seconds())
        early = fire_at - deps.clock.now()


def _claim(fire: FireInput, action: Action, deps: Dependencies) -> Action:
    """PENDING → IN_PROGRESS, fenced on the version read; a retry of this execution passes."""
    for _ in range(_CLAIM_ATTEMPTS):
        if action.status == Status.IN_PROGRESS:
            return action
        claimed = action.claimed(deps.clock.now(), fire.execution_name, deps.limits.transitions)
        try:
            deps.repository.save(claimed, expected_version=action.version)
            return claimed
        except ActionConflict:
            action = _current(fire, deps)
    raise ActionConflict(fire.id, f"could not claim after {_CLAIM_ATTEMPTS} attempts")


def _skip(fire: FireInput, action: Action, now: datetime, deps: Dependencies) -> NoReturn:
    """Record a missed occurrence as SKIPPED, schedule the next, end this execution."""
    late = (now - parse_iso(fire.fire_at)).total_seconds()
    policy = str(action.catch_up.policy)
    skipped = _tick(fire, action, now, "SKIPPED", {"reason": f"missed; catch-up {policy}"})
    record_tick(FireReport.from_detail(skipped), deps)
    deps.publisher.publish(
        "Schedule Skipped",
        {
            "id": action.id,
            "generation": fire.generation,
            "occurrence": fire.occurrence,
            "scheduledTime": fire.fire_at,
            "lateMs": skipped["lateMs"],
            "catchUp": policy,
        },
    )
    raise OccurrenceSkipped(action.id, fire.occurrence, late, policy)


@contextmanager
def _slot(action_type: str, holder: str, deps: Dependencies) -> Iterator[None]:
    """Hold one of the action type's concurrency slots while it runs, if it has a limit.

    All taken → ``ConcurrencyLimited``: the machine retries with jitter; the fire stays
    claimed, so it is neither lost nor run twice.
    """
    limit = deps.settings.concurrency_limits.get(action_type)
    if limit is None:
        yield
        return
    if deps.slots is None:
        raise RuntimeError(f"a concurrency limit is set for {action_type} but no slots table")
    slot = deps.slots.acquire(
        action_type, limit, holder, deps.clock.now(), deps.settings.slot_lease
    )
    if slot is None:
        raise ConcurrencyLimited(action_type, limit)
    try:
        yield
    finally:
        deps.slots.release(slot, holder)


def _note_failure(action_id: str, fire: FireInput, error: Exception, deps: Dependencies) -> None:
    """Record the attempt's error on the record (best effort: the machine records FAILED)."""
    action = deps.repository.get(action_id)
    if action is None or action.claimed_by != fire.execution_name:
        return
    noted = replace(
        action,
        last_error=f"{type(error).__name__}: {error}"[:1000],
        retry_count=fire.retry_count,
        version=action.version + 1,
        updated_at=iso(deps.clock.now()),
    )
    with suppress(ActionConflict):
        deps.repository.save(noted, expected_version=action.version)


def _tick(
    fire: FireInput, action: Action, now: datetime, outcome: str, result: dict[str, Any]
) -> dict[str, Any]:
    scheduled = parse_iso(fire.fire_at)
    return {
        "id": action.id,
        "generation": fire.generation,
        "occurrence": fire.occurrence,
        "scheduledTime": fire.fire_at,
        "actualTime": iso(now),
        "lateMs": int((now - scheduled).total_seconds() * 1000),
        "attempts": fire.retry_count + 1,
        "action": action.action,
        "data": action.data,
        "metadata": action.metadata,
        "outcome": outcome,
        "result": result,
        "executionName": fire.execution_name,
    }
