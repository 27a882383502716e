"""Invoked by the state machine at fire time → claim the fire, run the action type's fulfillment.

Errors are raised by name (ActionSuperseded, WaitContinued, TransientFulfillmentError,
PermanentFulfillmentError): the state machine's Retry and Catch match them as errorType.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import wiring
from tickwork.tracing import LazyTracer
from tickwork.usecases.fulfill import FireInput, fulfill_fire

logger = Logger()
tracer = LazyTracer()  # the X-Ray SDK loads at the first traced event
metrics = Metrics()


@logger.inject_lambda_context(correlation_id_path="input.id")
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    tick = fulfill_fire(FireInput.from_payload(event), wiring.from_environment())
    if (tick.get("result") or {}).get("tampered"):
        metrics.add_metric(name="tampered", unit=MetricUnit.Count, value=1)
    if tick["attempts"] > 1:
        metrics.add_metric(name="retries", unit=MetricUnit.Count, value=tick["attempts"] - 1)
    return tick
