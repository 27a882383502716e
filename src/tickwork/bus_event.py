"""What the functions on the bus read first: an EventBridge event, through Powertools' declared
EventBridge event (its data class: no model to build at a cold start). Its detail is read by the
use case's own declared model, which refuses (with a Schedule Rejected) a detail that is not the
object it declares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.utilities.data_classes.event_bridge_event import EventBridgeEvent

__all__ = ["BusEvent", "bus_event"]


@dataclass(frozen=True)
class BusEvent:
    id: str
    detail_type: str
    source: str
    detail: Any  # a JSON object from any sender: the use case's model refuses anything else


def bus_event(event: dict[str, Any]) -> BusEvent:
    envelope = EventBridgeEvent(event)
    return BusEvent(envelope.get_id, envelope.detail_type, envelope.source, envelope.detail)
