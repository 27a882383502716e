"""Every few minutes (EventBridge schedule) → give every action that lost its execution one:
restart lost starts, record lost ticks and failures, release dead claims."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import wiring
from tickwork.tracing import LazyTracer
from tickwork.usecases.reconcile import reconcile

logger = Logger()
tracer = LazyTracer()  # the X-Ray SDK loads at the first traced event
metrics = Metrics()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    repaired = reconcile(wiring.from_environment())
    repairs = sum(len(ids) for ids in repaired.values())
    metrics.add_metric(name="reconciler_repairs", unit=MetricUnit.Count, value=repairs)
    for kind, ids in repaired.items():
        metrics.add_metric(name=f"reconciler_{kind}", unit=MetricUnit.Count, value=len(ids))
    logger.info("reconciled", extra=repaired)
    return repaired
