"""Invoked by the state machine at fire time → claim the fire, run the action type's fulfillment.

Errors are raised by name (ActionSuperseded, WaitContinued, TransientFulfillmentError,
PermanentFulfillmentError): the state machine's Retry and Catch match them as errorType.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.domain.fire import FireAttempt
from tickwork.entry import Entry
from tickwork.usecases.fulfill import fulfill_fire

entry = Entry(correlation_id_path="input.id")


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    tick = fulfill_fire(FireAttempt.from_wire(event), bootstrap.from_environment())
    if tick.result.get("tampered"):
        entry.count("tampered")
    if tick.attempts > 1:
        entry.count("retries", tick.attempts - 1)
    return tick.to_wire()
