"""Invoked by the state machines at fire time.

The fire machine: ``{"input": ..., "executionName", "retryCount"}`` → claim the fire, run its
action type's fulfillment and return the tick with its proof; its Catch of a fire that failed
past its retries, ``{"report": ...}`` → the failure report, with its proof.
The batch machine: ``{"batch": ...}`` → run, record and announce every fire of the batch
(``fires``: what became of each).

Errors are raised by name (ActionSuperseded, WaitContinued, TransientFulfillmentError,
PermanentFulfillmentError): the state machine's Retry and Catch match them as errorType.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.domain.batch import BatchFire, BatchOrder, BatchOutcome
from tickwork.domain.fire import FireAttempt
from tickwork.entry import Entry
from tickwork.usecases.fire_batch import fire_batch
from tickwork.usecases.fire_proofs import proved_failure, with_proof
from tickwork.usecases.fulfill import fulfill_fire

entry = Entry(correlation_id_path="input.id")


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    deps = bootstrap.from_environment()
    name = str(event.get("executionName"))
    if "report" in event:
        entry.count("failed")
        return proved_failure(event["report"], name, deps).to_wire()
    if "batch" in event:
        order = BatchOrder.from_wire(event["batch"])
        fires = fire_batch(order, name, int(event.get("retryCount", 0)), deps)
        _count(fires)
        return {"fires": [fire.to_wire() for fire in fires]}
    tick = with_proof(fulfill_fire(FireAttempt.from_wire(event), deps), deps)
    if tick.result.get("tampered"):
        entry.count("tampered")
    if tick.attempts > 1:
        entry.count("retries", tick.attempts - 1)
    return tick.to_wire()


def _count(fires: list[BatchFire]) -> None:
    """The metrics the tick function would add for the fires a batch recorded (the alarms
    watch ``failed``), and how many fires batches ran and handed on."""
    entry.count("batched_fires", len(fires))
    for fire in fires:
        if fire.recorded:
            entry.count(_RECORDED_AS[fire.outcome])
            if fire.tick is not None:
                entry.measure("fire_lateness", fire.tick.late_ms)
        elif fire.outcome in (BatchOutcome.HANDED_OFF, BatchOutcome.PARKED):
            entry.count(f"batch_{fire.outcome.lower()}")


_RECORDED_AS = {
    BatchOutcome.FIRED: "fired",
    BatchOutcome.NO_ACTION: "no_action",
    BatchOutcome.FAILED: "failed",
}
