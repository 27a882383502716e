"""What the functions on the bus read first: an EventBridge event, as Powertools' parser declares
it (``EventBridgeModel``). Its detail is read by the use case's own declared model, which
refuses (with a Schedule Rejected) a detail that is not the object it declares."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel

__all__ = ["BusEvent", "bus_event"]


class BusEvent(EventBridgeModel):
    detail: Any  # a JSON object from any sender; the use case's model refuses anything else


def bus_event(event: dict[str, Any]) -> BusEvent:
    """``event`` parsed, or Powertools' ``ValidationError`` for one EventBridge never sends."""
    parsed: BusEvent = parse(event=event, model=BusEvent)
    return parsed
