"""Which execution a fire will run in, named before it is started (docs/protocol.md: a record
names its execution before it exists): its order, its deterministic keyed name, or — further
away than ``LaunchAheadSeconds`` — no execution yet: the fire is parked for the pump, from the
start of its batch window (``fire.grouping``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from tickwork.config import Settings
from tickwork.domain.action import Action
from tickwork.domain.fire import FireOrder, Trigger
from tickwork.domain.naming import execution_name
from tickwork.domain.steering import ManualFire
from tickwork.domain.times import ceil_second, iso
from tickwork.fire.grouping import launch_moment
from tickwork.fire.needs import Names
from tickwork.fire.orders import names_key
from tickwork.integrity.names import life_key

__all__ = [
    "fire_order",
    "manual_execution",
    "names_key_of",
    "plan",
    "planned_execution",
    "rounded_by",
]


def fire_order(
    action: Action,
    now: datetime,
    deps: Names,
    leg: int = 0,
    repair: int = 0,
    trigger: Trigger = Trigger.SCHEDULED,
) -> FireOrder:
    """The execution's input: which fire it is for, and when its Wait ends (at the fire: an
    execution is started at most ``LaunchAheadSeconds`` before it). Step Functions ends a Wait
    on a whole second: with ``FirePrecision`` second (the default) the Wait ends at the whole
    second at or after the fire, so the task never sleeps off milliseconds (up to 1 s later
    than the fire's millisecond, never earlier); with millisecond, at the second before, and
    the task sleeps to the millisecond."""
    if action.execution_time is None:
        raise ValueError(f"action {action.id!r} has no next fire to launch")
    due = action.execution_time
    return FireOrder(
        action_id=action.id,
        generation=action.generation,
        occurrence=action.occurrence,
        fire_at=due,
        wait_until=due if deps.settings.fire_precision == "millisecond" else ceil_second(due),
        leg=leg,
        repair=repair,
        trigger=trigger,
    )


def rounded_by(fire_at: datetime, settings: Settings) -> timedelta:
    """How much later than ``fire_at`` its execution is planned to wake (``FirePrecision``
    second: to the whole second at or after it): lateness within it is by design, so a fire is
    judged missed or late (``misfireThreshold``) only past it."""
    if settings.fire_precision == "millisecond":
        return timedelta(0)
    return ceil_second(fire_at) - fire_at


def plan(action: Action, now: datetime, deps: Names, gather: bool = False) -> Action:
    """Before the record of a new fire is written: name the execution it will run in, or park
    it when it is further away than ``LaunchAheadSeconds`` (no execution until the pump's).
    ``gather`` (a new action's first fire): one further away than ``NearParkSeconds`` is parked
    due now, so that the pump's next run starts it with the others of its batch window that
    came meanwhile — one execution for them, not a StartExecution each."""
    due = action.execution_time
    settings = deps.settings
    if due is not None and due - now > settings.launch_ahead:
        return action.parked(launch_moment(due, settings), now)
    if gather and settings.near_park and due is not None and due - now > settings.near_park:
        return action.parked(now, now)
    return action.planned(planned_execution(action, deps)[1])


def planned_execution(
    action: Action, deps: Names, leg: int = 0, repair: int = 0, handed: bool = False
) -> tuple[str, str]:
    """The name and ARN of the fire's own lone execution (``handed``: the one a batch hands it
    over to, which no launch takes)."""
    name = execution_name(
        action.id,
        action.generation,
        action.occurrence,
        leg,
        repair,
        key=names_key_of(action, deps),
        handed=handed,
    )
    return name, deps.executions.execution_arn(name)


def names_key_of(action: Action, deps: Names) -> bytes | None:
    """The key the action's executions are named under, one per life of the id: a purged (or
    expired) id created again never takes a name its earlier life used (its numbering starts
    over at generation 1)."""
    key = names_key(deps)
    return None if key is None else life_key(key, iso(action.created_at))


def manual_execution(action: Action, fire: ManualFire, deps: Names, repair: int = 0) -> str:
    return execution_name(
        action.id,
        fire.generation,
        fire.occurrence,
        repair=repair,
        manual=fire.number,
        key=names_key_of(action, deps),
    )
