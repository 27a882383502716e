"""Starting the execution that waits for an action's next fire, idempotently, once the record
names it (``fire.planning`` names it); parking the fire again when Step Functions refuses the
start; stopping a superseded lone execution. Every lone execution is started with a proved
order (``fire.orders``)."""

from __future__ import annotations

import logging
from contextlib import suppress
from datetime import datetime

from tickwork.domain.action import Action
from tickwork.domain.errors import ActionConflict, LaunchRefused
from tickwork.domain.execution import Machine, same_execution
from tickwork.domain.fire import FireOrder, Trigger
from tickwork.domain.steering import ManualFire
from tickwork.fire import writes
from tickwork.fire.needs import Launches
from tickwork.fire.orders import kind_of, start_lone
from tickwork.fire.planning import fire_order, manual_execution, planned_execution

__all__ = ["launch", "launch_manual", "park_again", "stop_own_execution"]

log = logging.getLogger("tickwork")


def launch(
    action: Action,
    now: datetime,
    deps: Launches,
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
    action: Action, execution_arn: str, now: datetime, deps: Launches, refused: LaunchRefused
) -> None:
    """Step Functions refused to start the execution the record names (the open-execution
    quota, throttling): the fire waits in the table again, due now, for the pump's next run. A
    record that moved on meanwhile is left to whatever moved it."""
    log.warning("fire parked again: %s", refused, extra={"id": action.id, "code": refused.code})
    with suppress(ActionConflict):
        writes.park_again(deps.records, action, execution_arn, now)


def stop_own_execution(action: Action, cause: str, deps: Launches) -> None:
    """Stop the execution that waits for this action's fire alone. A batch's is left running:
    it holds other actions' fires too, and finds this one changed (each fire is fenced on its
    key), so it ends this one quietly. A fire parked far whose launch moment has come may have
    been started without a name: its own execution, if it was, is stopped (if it went into a
    batch, there is none to stop)."""
    arn = action.execution_arn
    launch_at = action.launch_at
    if action.parked_far and launch_at is not None and launch_at <= deps.clock.now():
        arn = planned_execution(action, deps)[1]
    if kind_of(arn, deps) is Machine.FIRE:
        assert arn is not None
        deps.executions.stop(arn, cause)


def launch_manual(
    action: Action, fire: ManualFire, now: datetime, deps: Launches, repair: int = 0
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
