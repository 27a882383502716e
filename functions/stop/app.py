"""Schedule Stop (EventBridge) → cancel the action before its lock and stop its execution."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.data_classes.event_bridge_event import EventBridgeEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import wiring
from tickwork.tracing import LazyTracer
from tickwork.usecases.intake import accept_stop

logger = Logger()
tracer = LazyTracer()  # the X-Ray SDK loads at the first traced event
metrics = Metrics()


@logger.inject_lambda_context(correlation_id_path="detail.id")
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    envelope = EventBridgeEvent(event)  # Powertools' data class: no pydantic at cold start
    result = accept_stop(envelope.detail, envelope.get_id, wiring.from_environment())
    metrics.add_metric(name=result["outcome"], unit=MetricUnit.Count, value=1)
    logger.info("stop handled", extra={"result": result})
    return result
