"""Run now (Temporal's TriggerImmediately): one extra fire at once, through the same state
machine, exactly once per request, recorded in the history as RUN_NOW, the schedule unmoved.

A recurrence gets a fire of its own beside its schedule (even while paused, or while its next
fire is inside the lock). A one-off fires now instead of at its time, and is then done.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from tickwork.answers import ChangeAnswer, Done
from tickwork.domain.action import ACTIVE, LIVE, Action
from tickwork.domain.errors import ActionFinished, ActionNotFound, ManualFiresInFlight
from tickwork.domain.fire import Trigger
from tickwork.domain.identifiers import check_steered_id
from tickwork.domain.steering import MAX_MANUAL_IN_FLIGHT, ManualFire, check_note
from tickwork.domain.times import ceil_ms
from tickwork.fire import writes
from tickwork.fire.launch import launch, launch_manual, stop_own_execution
from tickwork.fire.planning import manual_execution, plan
from tickwork.fire.writes import decided_again
from tickwork.steering.lock import refuse_if_locked_one_off
from tickwork.steering.needs import Steers

__all__ = ["ask_manual_fire", "run_now"]


def run_now(action_id: str, deps: Steers, request_id: str | None = None) -> ChangeAnswer:
    """``request_id`` (the bus event's id, or the caller's) makes a repeated request a no-op.
    A request that races another writer (the pump, a fire recorded) reads again and decides
    again: nothing happens before its first write, which is fenced on the record it read."""
    action_id = check_steered_id(action_id)
    check_note(request_id, "requestId")
    # A request without an id gets one: a write that landed but whose answer was lost (the
    # client retries a conditional write, which then fails its condition) is known as this
    # request's own when it is decided again, and adds no second fire.
    asked_as = request_id or f"auto-{uuid.uuid4()}"
    return decided_again(lambda: _run_now(action_id, deps, asked_as, request_id is None))


def _run_now(
    action_id: str, deps: Steers, request_id: str, generated: bool = False
) -> ChangeAnswer:
    action = deps.records.get(action_id)
    if action is None:
        raise ActionNotFound(action_id)
    if action.status not in LIVE:
        raise ActionFinished(action_id, str(action.status), "run now (retry a FAILED one)")
    now = deps.clock.now()
    if not action.repeat:
        return _one_off_now(action, deps)
    asked = _asked_before(action, request_id)
    if asked is not None:
        if action.manual.fire(asked.number) is not None and asked.claimed_by is None:
            launch_manual(action, asked, now, deps)  # its launch may be what was lost
        # (an id of our own: this very request, whose first write's answer was lost)
        return _answer(action, asked, Done.TRIGGERED if generated else Done.UNCHANGED, deps)
    updated, fire = ask_manual_fire(action, Trigger.RUN_NOW, deps, request_id=request_id)
    launch_manual(updated, fire, now, deps)
    return _answer(updated, fire, Done.TRIGGERED, deps)


def ask_manual_fire(
    action: Action,
    trigger: Trigger,
    deps: Steers,
    occurrence: int = 0,
    key: str = "",
    request_id: str | None = None,
    scheduled: datetime | None = None,
) -> tuple[Action, ManualFire]:
    """Write a fire asked for by hand to the record (fenced on its version), bounded."""
    if len(action.manual.in_flight) >= MAX_MANUAL_IN_FLIGHT:
        raise ManualFiresInFlight(action.id, MAX_MANUAL_IN_FLIGHT)
    updated, fire = action.manual_requested(
        deps.clock.now(), trigger, occurrence, key, request_id, scheduled
    )
    writes.ask_manual_fire(deps.records, action, updated)
    return updated, fire


def _one_off_now(action: Action, deps: Steers) -> ChangeAnswer:
    now = deps.clock.now()
    refuse_if_locked_one_off(action, now, deps)  # it fires within the lock anyway
    moved = action.fired_now(ceil_ms(now), deps.limits)
    moved = plan(moved, now, deps)
    writes.run_one_off_now(deps.records, action, moved)
    if action.status in ACTIVE:
        stop_own_execution(action, "run now by hand", deps)
    launch(moved, now, deps, trigger=Trigger.RUN_NOW)
    return ChangeAnswer(
        action.id,
        Done.TRIGGERED,
        str(moved.status),
        execution_time=moved.execution_time or now,
        occurrence=moved.occurrence,
        manual=0,
        trigger=Trigger.RUN_NOW,
        idempotency_key=moved.key_of(moved.occurrence),
        execution_arn=moved.execution_arn,
    )


def _asked_before(action: Action, request_id: str | None) -> ManualFire | None:
    if request_id is None:
        return None
    return action.manual.by_request(request_id)


def _answer(action: Action, fire: ManualFire, outcome: Done, deps: Steers) -> ChangeAnswer:
    return ChangeAnswer(
        action.id,
        outcome,
        str(action.status),
        execution_time=fire.requested_at,
        occurrence=fire.occurrence,
        manual=fire.number,
        trigger=fire.trigger,
        idempotency_key=fire.idempotency_key,
        execution_arn=deps.executions.execution_arn(manual_execution(action, fire, deps)),
    )
