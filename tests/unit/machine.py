"""The state machine's steps, played on the fakes: what one execution does with its fire.

``run`` is the Fulfill task: the fire run, recorded, its tick put on the bus; an execution that
ends quietly (superseded, a leg, a skip) returns None. ``fulfill_fire`` is the fire run and
claimed but not recorded: a task that died right after its target answered, or an execution
started before ticks were recorded by their task (its Emit tick put the tick, and the tick
function recorded it). ``fail`` is the Catch path: the failure
report the machine emits when the fulfillment failed past its retries.
"""

from __future__ import annotations

from tickwork.answers import RecordAnswer
from tickwork.dependencies import Dependencies
from tickwork.domain.errors import ActionSuperseded, OccurrenceSkipped, WaitContinued
from tickwork.domain.fire import FireAttempt, FireFailure, Tick
from tickwork.domain.naming import execution_name
from tickwork.fire.fulfill import fulfill_claimed
from tickwork.fire.lone_fire import fire_lone
from tickwork.fire.orders import check_lone
from tickwork.fire.planning import manual_execution, names_key_of, planned_execution
from tickwork.fire.record import record_failure

__all__ = ["current", "fail", "fire_name", "fulfill_fire", "manual", "run"]


def fire_name(
    deps: Dependencies,
    action_id: str,
    generation: int,
    occurrence: int,
    leg: int = 0,
    repair: int = 0,
    manual: int = 0,
    handed: bool = False,
) -> str:
    """The name the stack gives that fire of the action's record (keyed for this life of
    the id, as ``launch`` names it; ``handed``: the one a batch hands it over to)."""
    action = deps.records.get(action_id)
    assert action is not None
    key = names_key_of(action, deps)
    return execution_name(
        action_id, generation, occurrence, leg, repair, manual, key=key, handed=handed
    )


def current(deps: Dependencies, action_id: str) -> str:
    """The name of the execution the record's next scheduled fire runs in."""
    action = deps.records.get(action_id)
    assert action is not None
    return planned_execution(action, deps)[0]


def manual(deps: Dependencies, action_id: str, number: int) -> str:
    action = deps.records.get(action_id)
    assert action is not None
    fire = action.manual.fire(number)
    assert fire is not None, f"no manual fire {number} in flight"
    return manual_execution(action, fire, deps)


def run(deps: Dependencies, name: str, retry_count: int = 0) -> Tick | None:
    order = deps.executions.started[name]  # type: ignore[attr-defined]
    arn = deps.executions.execution_arn(name)
    try:
        return fire_lone(FireAttempt(order, arn, retry_count), deps).tick
    except (ActionSuperseded, WaitContinued, OccurrenceSkipped):
        return None


def fulfill_fire(fire: FireAttempt, deps: Dependencies) -> Tick:
    """The order proved and the fire run (claimed by its execution), not recorded."""
    check_lone(fire.order, fire.execution_arn, deps)
    return fulfill_claimed(fire, deps)[0]


def fail(deps: Dependencies, name: str, error: str = "PermanentFulfillmentError") -> RecordAnswer:
    """The fulfillment failed past its retries: the machine's Catch reports it."""
    order = deps.executions.started[name]  # type: ignore[attr-defined]
    failure = FireFailure(
        action_id=order.action_id,
        generation=order.generation,
        occurrence=order.occurrence,
        scheduled_time=order.fire_at,
        execution_name=name,
        execution_arn=deps.executions.execution_arn(name),
        error=error,
        cause='{"errorMessage": "the receiver answered 503"}',
        manual=order.manual,
        trigger=order.trigger,
        failed_at=deps.clock.now(),  # the report is made as the last attempt ends
    )
    return record_failure(failure, deps)
