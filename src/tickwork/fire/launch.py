"""Starting the execution that waits for an action's next fire, idempotently, once the record
names it; or parking the fire in the table when it is further away than ``LaunchAheadSeconds``
(the pump starts it). Every lone execution is started with a proved order (``fire.orders``)."""

from __future__ import annotations

import logging
from contextlib import suppress
from datetime import datetime

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action, Status
from tickwork.domain.batch import window_of
from tickwork.domain.errors import ActionConflict, LaunchRefused
from tickwork.domain.execution import Machine, same_execution
from tickwork.domain.fire import FireOrder, Trigger
from tickwork.domain.naming import execution_name
from tickwork.domain.steering import ManualFire
from tickwork.domain.times import iso
from tickwork.fire.orders import kind_of, names_key, start_lone
from tickwork.fire.writes import Rule, update
from tickwork.integrity.names import life_key

__all__ = [
    "fire_order",
    "launch",
    "launch_manual",
    "manual_execution",
    "names_key_of",
    "park_again",
    "plan",
    "planned_execution",
    "stop_own_execution",
]

log = logging.getLogger("tickwork")


def fire_order(
    action: Action,
    now: datetime,
    deps: Dependencies,
    leg: int = 0,
    repair: int = 0,
    trigger: Trigger = Trigger.SCHEDULED,
) -> FireOrder:
    """The execution's input: which fire it is for, and when its Wait ends (at the fire: an
    execution is started at most ``LaunchAheadSeconds`` before it)."""
    if action.execution_time is None:
        raise ValueError(f"action {action.id!r} has no next fire to launch")
    return FireOrder(
        action_id=action.id,
        generation=action.generation,
        occurrence=action.occurrence,
        fire_at=action.execution_time,
        wait_until=action.execution_time,
        leg=leg,
        repair=repair,
        trigger=trigger,
    )


def plan(action: Action, now: datetime, deps: Dependencies) -> Action:
    """Before the record of a new fire is written: name the execution it will run in, or park
    it when it is further away than ``LaunchAheadSeconds`` (no execution until the pump's)."""
    due = action.execution_time
    if due is not None and due - now > deps.settings.launch_ahead:
        # From the start of its batch window: the fires due in one window come due for launch
        # together, so one pump run finds them all (and batches them).
        window = window_of(due, deps.settings.batch_window)
        return action.parked(window - deps.settings.launch_ahead)
    return action.planned(planned_execution(action, deps)[1])


def planned_execution(
    action: Action, deps: Dependencies, leg: int = 0, repair: int = 0
) -> tuple[str, str]:
    name = execution_name(
        action.id, action.generation, action.occurrence, leg, repair, key=names_key_of(action, deps)
    )
    return name, deps.executions.execution_arn(name)


def names_key_of(action: Action, deps: Dependencies) -> bytes | None:
    """The key the action's executions are named under, one per life of the id: a purged (or
    expired) id created again never takes a name its earlier life used (its numbering starts
    over at generation 1)."""
    key = names_key(deps)
    return None if key is None else life_key(key, iso(action.created_at))


def launch(
    action: Action,
    now: datetime,
    deps: Dependencies,
    leg: int = 0,
    repair: int = 0,
    trigger: Trigger = Trigger.SCHEDULED,
) -> str | None:
    """Start the execution for the action's current (generation, occurrence, leg, repair), which
    the record, as written, already names (docs/protocol.md: a record names an execution before
    it starts); None when the fire is parked (the pump starts it), was refused, or the record
    names another execution (a repeated Start after the pump put the fire in a batch).

    Safe to repeat: the name is deterministic and an existing execution of that name counts
    as started. A refused first start (the open-execution quota, throttling) parks the fire
    again, due now: the pump retries it, and raises the alarm while refusals go on. A refused
    repair or leg is raised: the reconciler, or the state machine's retry, tries again.
    """
    if action.is_parked:
        return None
    name, arn = planned_execution(action, deps, leg, repair)
    if not same_execution(action.execution_arn, arn):
        # The record names another execution — a batch's, a hand-over's, one named before names
        # were keyed: the fire is that one's, and this one is never started beside it.
        return None
    try:
        return start_lone(name, fire_order(action, now, deps, leg, repair, trigger), deps)
    except LaunchRefused as refused:
        if leg or repair:
            raise
        park_again(action, arn, now, deps, refused)
        return None


def park_again(
    action: Action, execution_arn: str, now: datetime, deps: Dependencies, refused: LaunchRefused
) -> None:
    """Step Functions refused to start the execution the record names (the open-execution
    quota, throttling): the fire waits in the table again, due now, for the pump's next run. A
    record that moved on meanwhile is left to whatever moved it."""
    log.warning("fire parked again: %s", refused, extra={"id": action.id, "code": refused.code})

    def parked(current: Action) -> Action | None:
        named = same_execution(current.execution_arn, execution_arn)
        if current.fire_key != action.fire_key or current.status != Status.PENDING or not named:
            return None
        return current.parked_again(now, now)

    with suppress(ActionConflict):
        update(deps.records, action.id, Rule.PARK_AGAIN, parked, first=action)


def stop_own_execution(action: Action, cause: str, deps: Dependencies) -> None:
    """Stop the execution that waits for this action's fire alone. A batch's is left running:
    it holds other actions' fires too, and finds this one changed (each fire is fenced on its
    key), so it ends this one quietly."""
    arn = action.execution_arn
    if kind_of(arn, deps) is Machine.FIRE:
        assert arn is not None
        deps.executions.stop(arn, cause)


def manual_execution(action: Action, fire: ManualFire, deps: Dependencies, repair: int = 0) -> str:
    return execution_name(
        action.id,
        fire.generation,
        fire.occurrence,
        repair=repair,
        manual=fire.number,
        key=names_key_of(action, deps),
    )


def launch_manual(
    action: Action, fire: ManualFire, now: datetime, deps: Dependencies, repair: int = 0
) -> str:
    """Start the execution of a fire asked for by hand: due now, through the same machine. A
    backfilled one carries its past occurrence's scheduled time (its tick's scheduledTime)."""
    order = FireOrder(
        action_id=action.id,
        generation=fire.generation,
        occurrence=fire.occurrence,
        fire_at=fire.scheduled or now,
        wait_until=now,
        repair=repair,
        manual=fire.number,
        trigger=fire.trigger,
    )
    return start_lone(manual_execution(action, fire, deps, repair), order, deps)
