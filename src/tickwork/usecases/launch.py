"""Starting the execution that waits for an action's next fire, idempotently."""

from __future__ import annotations

from datetime import datetime

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action
from tickwork.domain.fire import FireOrder, Trigger
from tickwork.domain.naming import execution_name
from tickwork.domain.steering import ManualFire

__all__ = ["fire_order", "launch", "launch_manual", "manual_execution", "planned_execution"]


def fire_order(
    action: Action,
    now: datetime,
    deps: Dependencies,
    leg: int = 0,
    repair: int = 0,
    trigger: Trigger = Trigger.SCHEDULED,
) -> FireOrder:
    """The execution's input: which fire it is for, and when its Wait ends.

    A fire further away than one leg waits until the leg's end and then continues in a new
    execution (Standard executions live at most a year).
    """
    if action.execution_time is None:
        raise ValueError(f"action {action.id!r} has no next fire to launch")
    return FireOrder(
        action_id=action.id,
        generation=action.generation,
        occurrence=action.occurrence,
        fire_at=action.execution_time,
        wait_until=min(action.execution_time, now + deps.settings.leg),
        leg=leg,
        repair=repair,
        trigger=trigger,
    )


def planned_execution(
    action: Action, deps: Dependencies, leg: int = 0, repair: int = 0
) -> tuple[str, str]:
    name = execution_name(action.id, action.generation, action.occurrence, leg, repair)
    return name, deps.executions.execution_arn(name)


def launch(
    action: Action,
    now: datetime,
    deps: Dependencies,
    leg: int = 0,
    repair: int = 0,
    trigger: Trigger = Trigger.SCHEDULED,
) -> str:
    """Start the execution for the action's current (generation, occurrence, leg).

    Safe to repeat: the name is deterministic and an existing execution of that name counts
    as started.
    """
    name, _ = planned_execution(action, deps, leg, repair)
    return deps.executions.start(name, fire_order(action, now, deps, leg, repair, trigger))


def manual_execution(action: Action, fire: ManualFire, repair: int = 0) -> str:
    return execution_name(
        action.id, fire.generation, fire.occurrence, repair=repair, manual=fire.number
    )


def launch_manual(
    action: Action, fire: ManualFire, now: datetime, deps: Dependencies, repair: int = 0
) -> str:
    """Start the execution of a fire asked for by hand: due now, through the same machine."""
    order = FireOrder(
        action_id=action.id,
        generation=fire.generation,
        occurrence=fire.occurrence,
        fire_at=now,
        wait_until=now,
        repair=repair,
        manual=fire.number,
        trigger=fire.trigger,
    )
    return deps.executions.start(manual_execution(action, fire, repair), order)
