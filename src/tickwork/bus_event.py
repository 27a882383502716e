"""What the functions on the bus read first: an EventBridge event, as Powertools' parser declares
it (``EventBridgeModel``), whose detail is a JSON object (every event tickwork takes has one)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel

__all__ = ["BusEvent", "bus_event"]


class BusEvent(EventBridgeModel):
    detail: dict[str, Any]


def bus_event(event: dict[str, Any]) -> BusEvent:
    """``event`` parsed, or Powertools' ``ValidationError`` for one EventBridge never sends."""
    parsed: BusEvent = parse(event=event, model=BusEvent)
    return parsed
