"""EVENTBRIDGE_EVENT: an event put on a named bus: the detail given, with one more member,
``tickwork``, naming the fire (id, occurrence, scheduledTime, idempotencyKey, attempt, trigger)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import BaseModel, Field, field_validator

from tickwork.domain.errors import PermanentFulfillmentError, TransientFulfillmentError
from tickwork.fulfillment.arns import Arn, check_size, parse_arn
from tickwork.fulfillment.aws_errors import code_is_transient
from tickwork.fulfillment.base import FulfillmentRequest, data_problem
from tickwork.fulfillment.delivery import Delivery
from tickwork.fulfillment.targets import (
    TargetData,
    calling,
    refuse_identity_member,
    with_identity,
)
from tickwork.ports import TargetClients

__all__ = ["EventBusData", "EventBusFulfillment"]

_EXAMPLE = "arn:aws:events:us-east-1:123456789012:event-bus/orders"


class EventBusData(TargetData):
    """An event put on an EventBridge bus. Its detail gains a ``tickwork`` member naming the
    fire (id, occurrence, scheduledTime, idempotencyKey, attempt) for consumers to dedupe on."""

    service: ClassVar[str] = "events"
    arn_field: ClassVar[str] = "eventBusArn"

    event_bus_arn: str = Field(description=f"The bus, e.g. {_EXAMPLE}.")
    detail_type: str = Field(min_length=1, max_length=128, description="The event's detail-type.")
    source: str = Field(
        default="tickwork.action",
        min_length=1,
        max_length=256,
        description="The event's source (not aws.*).",
    )
    detail: dict[str, Any] = Field(
        default_factory=dict, description="The event's detail: a JSON object."
    )

    @field_validator("event_bus_arn")
    @classmethod
    def _bus(cls, value: str) -> str:
        parse_arn(value, "events", r"event-bus/[A-Za-z0-9._\-/]{1,256}", _EXAMPLE)
        return value

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        if value.startswith("aws."):
            raise data_problem(f"{value!r} is a source of AWS's own", "use a source of yours")
        return value

    @field_validator("detail", mode="before")
    @classmethod
    def _detail(cls, value: Any) -> Any:
        refuse_identity_member(value, "detail")
        check_size(value, "detail")
        return value

    @property
    def target(self) -> Arn:
        return parse_arn(self.event_bus_arn, "events", r".+", _EXAMPLE)


class EventBusFulfillment:
    action_type: ClassVar[str] = "EVENTBRIDGE_EVENT"
    data_model: ClassVar[type[BaseModel]] = EventBusData

    @classmethod
    def built(cls, delivery: Delivery) -> EventBusFulfillment:
        return cls(delivery.targets)

    def __init__(self, clients: TargetClients) -> None:
        self._clients = clients

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        data = EventBusData.model_validate(request.data)
        entry = {
            "EventBusName": data.event_bus_arn,
            "Source": data.source,
            "DetailType": data.detail_type,
            "Detail": json.dumps(with_identity(data.detail, request)),
        }
        target = f"PutEvents to {data.event_bus_arn}"
        with calling(target):
            answer = self._clients.client("events", request.role_arn).put_events(Entries=[entry])
        (result,) = answer["Entries"]
        if answer.get("FailedEntryCount"):
            code = str(result.get("ErrorCode", "Unknown"))
            message = f"{target}: {code}: {result.get('ErrorMessage', '')}"
            if code_is_transient(code):
                raise TransientFulfillmentError(message)
            raise PermanentFulfillmentError(message)
        return {"eventId": result["EventId"]}
