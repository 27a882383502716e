"""Invoked by the state machine at fire time → claim the fire, run the action type's fulfillment,
and return the tick with its proof. Invoked again by the Catch of a fire that failed past its
retries (``{"report": ..., "executionName": ...}``) → the failure report, with its proof.

Errors are raised by name (ActionSuperseded, WaitContinued, TransientFulfillmentError,
PermanentFulfillmentError): the state machine's Retry and Catch match them as errorType.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.domain.fire import FireAttempt
from tickwork.entry import Entry
from tickwork.usecases.fire_proofs import proved_failure, with_proof
from tickwork.usecases.fulfill import fulfill_fire

entry = Entry(correlation_id_path="input.id")


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    deps = bootstrap.from_environment()
    if "report" in event:
        entry.count("failed")
        return proved_failure(event["report"], str(event.get("executionName")), deps).to_wire()
    tick = with_proof(fulfill_fire(FireAttempt.from_wire(event), deps), deps)
    if tick.result.get("tampered"):
        entry.count("tampered")
    if tick.attempts > 1:
        entry.count("retries", tick.attempts - 1)
    return tick.to_wire()
