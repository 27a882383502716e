"""Schedule Stop (EventBridge) → cancel the action before its lock and stop its execution."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.data_classes.event_bridge_event import EventBridgeEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.entry import Entry
from tickwork.usecases.intake import accept_stop

entry = Entry(correlation_id_path="detail.id")


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    envelope = EventBridgeEvent(event)  # Powertools' data class: no pydantic at cold start
    result = accept_stop(envelope.detail, envelope.get_id, bootstrap.from_environment())
    entry.count(result["outcome"])
    entry.logger.info("stop handled", extra={"result": result})
    return result
