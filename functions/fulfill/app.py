"""Invoked by the state machines at fire time.

The fire machine: ``{"input": ..., "executionName", "executionArn", "retryCount"}`` → prove the
order, claim the fire, run its action type's fulfillment, record it, put its tick (with its
proof) on the bus and return the tick;
its Catch of a fire that failed past its retries, ``{"report": ...}`` → the failure report,
with its proof. The batch machine: ``{"batch": ...}`` → run, record and announce every member
of the batch (``fires``: what became of each).

Errors are raised by name (ForgedOrder, ActionSuperseded, WaitContinued,
TransientFulfillmentError, PermanentFulfillmentError, TickUndelivered, TickPending): the state
machine's Retry and Catch match them as errorType.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.domain.batch import MemberOutcome, MemberResult
from tickwork.domain.fire import Outcome
from tickwork.domain.task_call import TaskCall
from tickwork.entry import Entry
from tickwork.fire.fire_batch import fire_batch
from tickwork.fire.lone_fire import failure_of, fire_lone
from tickwork.ports import ExecutionStarter

entry = Entry(correlation_id_path="input.id")


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    deps = bootstrap.from_environment()
    call = TaskCall.from_wire(event)
    if call.report is not None:
        entry.count("failed")
        failure = failure_of(call.report, _arn(call, deps.executions), deps).to_wire()
        entry.logged("fire failed", failure, notable=True)  # why, in the function's log too
        return failure
    if call.batch is not None:
        members = fire_batch(call.batch, _arn(call, deps.batches), call.retry_count, deps)
        _count(members)
        return {"fires": [member.to_wire() for member in members]}
    assert call.attempt is not None
    attempt = replace(call.attempt, execution_arn=_arn(call, deps.executions))
    fired = fire_lone(attempt, deps)
    tick = fired.tick
    if fired.recorded:  # what the tick function counts for the ticks it records
        entry.count("no_action" if tick.outcome is Outcome.NO_ACTION else "fired")
        entry.measure("fire_lateness", tick.late_ms)
        if tick.result.get("tampered"):
            entry.count("tampered")
        if tick.attempts > 1:
            entry.count("retries", tick.attempts - 1)
    return tick.to_wire()


def _arn(call: TaskCall, machine: ExecutionStarter) -> str:
    """The execution's ARN ($$.Execution.Id); an execution started before the payload carried
    it gives its name only, on the machine whose task sends this payload."""
    return call.execution_arn or machine.execution_arn(call.execution_name)


def _count(members: list[MemberResult]) -> None:
    """The metrics the tick function would add for the members a batch recorded (the alarms
    watch ``failed``), and how many members batches ran and handed over."""
    entry.count("batched_fires", len(members))
    for member in members:
        if member.recorded:
            entry.count(_RECORDED_AS[member.outcome])
            if member.tick is not None:
                entry.measure("fire_lateness", member.tick.late_ms)
        elif member.outcome in (MemberOutcome.HANDED_OVER, MemberOutcome.PARKED):
            entry.count(f"batch_{member.outcome.lower()}")


_RECORDED_AS = {
    MemberOutcome.FIRED: "fired",
    MemberOutcome.NO_ACTION: "no_action",
    MemberOutcome.FAILED: "failed",
}
