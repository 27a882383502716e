"""TICK: the Schedule Tick event the state machine emits after this step is the delivery."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.fulfillment.delivery import Delivery

__all__ = ["TickData", "TickFulfillment"]


class TickData(BaseModel):
    """Any JSON object: it is passed through to subscribers of the tick event untouched."""

    model_config = ConfigDict(extra="allow", frozen=True)


class TickFulfillment:
    action_type: ClassVar[str] = "TICK"
    data_model: ClassVar[type[BaseModel]] = TickData

    @classmethod
    def built(cls, delivery: Delivery) -> TickFulfillment:
        return cls()

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        return {"delivered": "tick-event"}
