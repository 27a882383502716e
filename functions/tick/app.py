"""Schedule Tick / Failed from tickwork itself → record the occurrence, then go on or finish."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.data_classes.event_bridge_event import EventBridgeEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.answers import Done, RecordAnswer, Rejection
from tickwork.domain.events import DetailType
from tickwork.entry import Entry
from tickwork.steering.intake import accept_report

entry = Entry(correlation_id_path="detail.id")


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    envelope = EventBridgeEvent(event)  # Powertools' data class: no pydantic at cold start
    result = accept_report(
        envelope.detail_type, envelope.detail, envelope.get_id, bootstrap.from_environment()
    )
    if isinstance(result, Rejection):
        entry.count("rejected")
        if result.rejected.reason == "ForgedReport":
            entry.count("rejected_forged")  # a tick or failure no fire of this stack made
    elif result.outcome is Done.RECORDED:
        entry.count(_outcome_metric(envelope.detail_type, result))
        lateness = envelope.detail.get("lateMs")
        if isinstance(lateness, int):
            entry.measure("fire_lateness", lateness)
    answer = result.to_wire()
    entry.logger.info("fire recorded", extra={"result": answer})
    return answer


def _outcome_metric(detail_type: str, result: RecordAnswer) -> str:
    """fired | no_action | failed: the metrics the template's alarms watch."""
    if detail_type == DetailType.FAILED:
        return "failed"
    return "no_action" if result.status == "NO_ACTION" else "fired"
