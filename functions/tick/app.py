"""Schedule Tick / Failed from tickwork itself → record the occurrence, then go on or finish."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.answers import Done, RecordAnswer, Rejection
from tickwork.bus_event import bus_event
from tickwork.domain.events import DetailType
from tickwork.entry import Entry
from tickwork.steering.intake import accept_report

entry = Entry(correlation_id_path="detail.id")


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    envelope = bus_event(event)  # Powertools' parser: the declared envelope
    result = accept_report(
        envelope.detail_type,
        envelope.detail,
        envelope.id,
        bootstrap.from_environment(),
        envelope.source,
    )
    if isinstance(result, Rejection):
        entry.count("rejected")
        if result.rejected.reason == "ForgedReport":
            entry.count("rejected_forged")  # a tick or failure no fire of this stack made
    elif result.outcome is Done.RECORDED:
        entry.count(_outcome_metric(envelope.detail_type, result))
        if result.late_ms is not None:
            entry.measure("fire_lateness", result.late_ms)
    answer = result.to_wire()
    entry.logged("fire recorded", answer, notable=isinstance(result, Rejection))
    return answer


def _outcome_metric(detail_type: str, result: RecordAnswer) -> str:
    """fired | no_action | failed: the metrics the template's alarms watch."""
    if detail_type == DetailType.FAILED:
        return "failed"
    return "no_action" if result.status == "NO_ACTION" else "fired"
