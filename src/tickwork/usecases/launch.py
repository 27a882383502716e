"""Starting the execution that waits for an action's next fire, idempotently."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action
from tickwork.domain.naming import execution_name
from tickwork.domain.times import iso

__all__ = ["fire_payload", "launch", "planned_execution"]


def fire_payload(
    action: Action, now: datetime, deps: Dependencies, leg: int = 0, repair: int = 0
) -> dict[str, Any]:
    """The execution input: which fire it is for, and when its Wait ends.

    A fire further away than one leg waits until the leg's end and then continues in a new
    execution (Standard executions live at most a year). ``waitUntil`` keeps the milliseconds:
    Step Functions truncates a Wait's timestamp to the second, so the Wait ends up to a second
    before the fire and Fulfill's clock guard sleeps off the rest. The fire is then on time
    rather than up to a second late, for at most a second of the fulfill function's time.
    """
    assert action.execution_time is not None
    wait_until = min(action.execution_time, now + deps.settings.leg)
    payload = {
        "id": action.id,
        "generation": action.generation,
        "occurrence": action.occurrence,
        "leg": leg,
        "fireAt": iso(action.execution_time),
        "waitUntil": iso(wait_until),
    }
    if repair:
        payload["repair"] = repair
    return payload


def planned_execution(
    action: Action, deps: Dependencies, leg: int = 0, repair: int = 0
) -> tuple[str, str]:
    name = execution_name(action.id, action.generation, action.occurrence, leg, repair)
    return name, deps.executions.execution_arn(name)


def launch(action: Action, now: datetime, deps: Dependencies, leg: int = 0, repair: int = 0) -> str:
    """Start the execution for the action's current (generation, occurrence, leg).

    Safe to repeat: the name is deterministic and an existing execution of that name counts
    as started.
    """
    name, _ = planned_execution(action, deps, leg, repair)
    return deps.executions.start(name, fire_payload(action, now, deps, leg, repair))
