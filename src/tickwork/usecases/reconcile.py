"""The periodic repair: every action that should have a live execution gets exactly one.

Four repairs, each safe to repeat and to run beside the normal flow (every start is
idempotent by name, every write is fenced on the record's version, and an execution that finds
its record moved on ends quietly):

- **restarted** — PENDING and due within the horizon, but its execution never started (a crash
  between the write and the start, a stack that was down) or ended without firing (stopped by
  hand, a failure before the claim whose report was lost): start one. A parked fire whose
  launch moment passed (the pump was down) is launched as the pump would.
- **recorded** — IN_PROGRESS, and the claiming execution SUCCEEDED, but its Schedule Tick never
  got recorded (a lost event, a tick handler that kept failing): record the tick from the
  execution's output. Nothing runs twice.
- **failed** — IN_PROGRESS, and the claiming execution failed past its retries, but its
  Schedule Failed report was lost: record the occurrence FAILED.
- **released** — IN_PROGRESS for longer than ``stuck_after`` and its claiming execution is gone
  (aborted, timed out, or lost with the emulator): release the claim and fire again. This is the
  one at-least-once repair; receivers dedupe on ``<id>:<occurrence>``.

After an outage that lost every execution (a restarted local stack), ``horizon=None`` and
``stuck_after=0`` look at every waiting action and every claim.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action, Status
from tickwork.domain.errors import ActionConflict, MalformedFire
from tickwork.domain.events import DetailType
from tickwork.domain.fire import FireFailure, Outcome, Tick
from tickwork.domain.steering import ManualFire
from tickwork.ports import ExecutionState
from tickwork.usecases.launch import launch, launch_manual, manual_execution, planned_execution
from tickwork.usecases.pump import launch_parked
from tickwork.usecases.record import record_failure, record_tick

__all__ = ["Repairs", "reconcile"]

_MAX_REPAIRS = 50  # repair executions per fire; each one needs a name of its own


@dataclass
class Repairs:
    restarted: list[str] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.restarted) + len(self.recorded) + len(self.failed) + len(self.released)

    def as_dict(self) -> dict[str, list[str]]:
        return asdict(self)


def reconcile(
    deps: Dependencies,
    horizon: timedelta | None = timedelta(minutes=10),
    stuck_after: timedelta = timedelta(minutes=15),
    limit: int = 10_000,
) -> dict[str, Any]:
    now = deps.clock.now()
    repairs = Repairs()
    until = None if horizon is None else now + horizon
    for action in deps.repository.in_fire_order(Status.PENDING, limit, until):
        if _restart_if_lost(action, now, deps):
            repairs.restarted.append(action.id)
    for action in deps.repository.in_fire_order(Status.IN_PROGRESS, limit):
        if now - action.updated_at >= stuck_after:
            _resolve_claim(action, now, deps, repairs)
    for action in deps.repository.with_manual_fires(limit):
        for fire in action.manual:
            if now - fire.requested_at >= stuck_after:
                _resolve_manual(action, fire, now, deps, repairs)
    if repairs.total:
        deps.publisher.publish(DetailType.RECONCILED, repairs.as_dict())
    return repairs.as_dict()


def _restart_if_lost(action: Action, now: datetime, deps: Dependencies) -> bool:
    if action.is_parked:  # the pump's, unless its launch moment passed unnoticed
        overdue = action.launch_at is not None and action.launch_at <= now
        return overdue and launch_parked(action.id, now, deps) == "launched"
    current = _name_of(action.execution_arn) or planned_execution(action, deps)[0]
    state = deps.executions.describe(current)
    if state is not None and state.running:
        return False
    fresh = deps.repository.get(action.id)
    if fresh is None or fresh.version != action.version:
        return False  # it moved on while we looked: the normal flow has it
    return _relaunch(fresh, now, deps)


def _resolve_claim(action: Action, now: datetime, deps: Dependencies, repairs: Repairs) -> None:
    state = deps.executions.describe(action.claimed_by) if action.claimed_by else None
    if state is not None and state.running:
        return  # still retrying, or waiting for a concurrency slot
    tick = _tick_of(state, action)
    if tick is not None:
        if record_tick(tick, deps)["outcome"] == "recorded":
            repairs.recorded.append(action.id)
        return
    if state is not None and state.status == "FAILED" and state.error == "FireFailed":
        failure = FireFailure(
            action_id=action.id,
            generation=action.generation,
            occurrence=action.occurrence,
            scheduled_time=action.execution_time or now,
            execution_name=action.claimed_by or "",
            error="FireFailed",
            cause=action.last_error or state.cause,
        )
        if record_failure(failure, deps)["outcome"] == "recorded":
            repairs.failed.append(action.id)
        return
    with suppress(ActionConflict):
        released = action.released(now, deps.limits.transitions)
        deps.repository.save(released, action.version)
        _relaunch(released, now, deps)
        repairs.released.append(action.id)


def _resolve_manual(
    action: Action, fire: ManualFire, now: datetime, deps: Dependencies, repairs: Repairs
) -> None:
    """A fire asked for by hand whose execution ended unrecorded, or was lost."""
    repair = 0
    for repair in range(_MAX_REPAIRS + 1):
        name = manual_execution(action, fire, repair)
        state = deps.executions.describe(name)
        if state is None:
            break
        if state.running:
            return
        tick = _manual_tick_of(state, fire)
        if tick is not None:
            if record_tick(tick, deps)["outcome"] == "recorded":
                repairs.recorded.append(action.id)
            return
        if state.status == "FAILED" and state.error == "FireFailed":
            failure = FireFailure(
                action_id=action.id,
                generation=fire.generation,
                occurrence=fire.occurrence,
                scheduled_time=fire.requested_at,
                execution_name=name,
                error="FireFailed",
                cause=state.cause,
                manual=fire.number,
                trigger=fire.trigger,
            )
            if record_failure(failure, deps)["outcome"] == "recorded":
                repairs.failed.append(action.id)
            return
    else:
        raise RuntimeError(f"{action.id}: {_MAX_REPAIRS} repair executions already used")
    with suppress(ActionConflict):
        if fire.claimed_by is not None:  # its execution is gone: the claim goes with it
            deps.repository.save(
                action.manual_claimed(now, fire.number, None), expected_version=action.version
            )
        launch_manual(action, fire, now, deps, repair=repair)
        repairs.restarted.append(action.id)


def _manual_tick_of(state: ExecutionState, fire: ManualFire) -> Tick | None:
    if state.status != "SUCCEEDED":
        return None
    try:
        tick = Tick.from_wire(state.output, "output")
    except MalformedFire:
        return None
    return tick if tick.manual == fire.number else None


def _relaunch(action: Action, now: datetime, deps: Dependencies) -> bool:
    """Start the fire's execution under the first name not used yet: its own name if it never
    started, else a numbered repair. False if one is already running."""
    for repair in range(_MAX_REPAIRS + 1):
        name, arn = planned_execution(action, deps, repair=repair)
        state = deps.executions.describe(name)
        if state is not None and state.running:
            return False
        if state is None:
            launch(action, now, deps, repair=repair)
            if action.execution_arn != arn:
                with suppress(ActionConflict):
                    deps.repository.save(action.with_execution(now, arn), action.version)
            return True
    raise RuntimeError(f"{action.id}: {_MAX_REPAIRS} repair executions already used")


def _tick_of(state: ExecutionState | None, action: Action) -> Tick | None:
    """The tick a succeeded execution emitted, if it fired the record's current occurrence."""
    if state is None or state.status != "SUCCEEDED":
        return None
    try:
        tick = Tick.from_wire(state.output, "output")
    except MalformedFire:
        return None  # it ended quietly (superseded, a leg, a skip): its output is its input
    if tick.key != action.fire_key or tick.outcome is Outcome.SKIPPED:
        return None
    return tick


def _name_of(execution_arn: str | None) -> str | None:
    return execution_arn.rpartition(":")[2] if execution_arn else None
