"""HTTP API (API Gateway HTTP API, payload v2) → the route for the request, as JSON."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork.api.routes import app, path_action_id
from tickwork.tracing import LazyTracer

logger = Logger()
tracer = LazyTracer()  # the X-Ray SDK loads at the first traced event
metrics = Metrics()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = event.get("requestContext", {})
    logger.set_correlation_id(path_action_id(event.get("rawPath", "")) or request.get("requestId"))
    response = app.resolve(event, context)
    metrics.add_metric(
        name=f"api_{response['statusCode'] // 100}xx", unit=MetricUnit.Count, value=1
    )
    return response
