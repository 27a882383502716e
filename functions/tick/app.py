"""Schedule Tick / Failed from tickwork itself → record the occurrence, then go on or finish."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.data_classes.event_bridge_event import EventBridgeEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import wiring
from tickwork.tracing import LazyTracer
from tickwork.usecases.record import FireReport, record_failure, record_tick


def _outcome_metric(detail_type: str, result: dict[str, Any]) -> str:
    """fired | no_action | failed: the metrics the template's alarms watch."""
    if detail_type == "Schedule Failed":
        return "failed"
    return "no_action" if result["status"] == "NO_ACTION" else "fired"


logger = Logger()
tracer = LazyTracer()  # the X-Ray SDK loads at the first traced event
metrics = Metrics()


@logger.inject_lambda_context(correlation_id_path="detail.id")
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    envelope = EventBridgeEvent(event)  # Powertools' data class: no pydantic at cold start
    report = FireReport.from_detail(envelope.detail)
    record = record_failure if envelope.detail_type == "Schedule Failed" else record_tick
    result = record(report, wiring.from_environment())
    if result["outcome"] == "recorded":
        metric = _outcome_metric(envelope.detail_type, result)
        metrics.add_metric(name=metric, unit=MetricUnit.Count, value=1)
    if "lateMs" in envelope.detail:
        metrics.add_metric(
            name="fire_lateness", unit=MetricUnit.Milliseconds, value=envelope.detail["lateMs"]
        )
    logger.info("fire recorded", extra={"result": result})
    return result
