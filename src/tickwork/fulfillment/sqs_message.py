"""SQS_MESSAGE: a message to a queue. A FIFO queue gets a message group (``messageGroupId``, by
default the action's id) and the fire's idempotency key as its deduplication id, so a repeated
attempt is delivered once. The fire rides in message attributes (``messages``)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field, JsonValue, ValidationInfo, field_validator

from tickwork.fulfillment.arns import Arn, parse_arn
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.fulfillment.delivery import Delivery
from tickwork.fulfillment.endpoints import queue_url
from tickwork.fulfillment.messages import (
    MOST_USER_ATTRIBUTES,
    OWN_ATTRIBUTES,
    check_attributes,
    check_body,
    fifo_fields,
    message_fields,
    message_result,
)
from tickwork.fulfillment.targets import TargetData, calling
from tickwork.ports import TargetClients

__all__ = ["SqsMessageData", "SqsMessageFulfillment"]

_EXAMPLE = "arn:aws:sqs:us-east-1:123456789012:invoices.fifo"


class SqsMessageData(TargetData):
    """A message sent to an SQS queue. A FIFO queue (.fifo) gets MessageGroupId (messageGroupId,
    else the action's id) and MessageDeduplicationId (the fire's idempotency key): a repeated
    attempt is delivered once. The fire rides in message attributes tickwork-idempotency-key,
    tickwork-action-id, tickwork-occurrence and tickwork-fire (JSON: scheduledTime, attempt,
    trigger), leaving 6 of SQS's 10 to the action."""

    service: ClassVar[str] = "sqs"
    arn_field: ClassVar[str] = "queueArn"

    queue_arn: str = Field(description=f"The queue, e.g. {_EXAMPLE}.")
    message_body: JsonValue = Field(
        description="The body: a string is sent as it is, anything else as JSON."
    )
    message_group_id: str | None = Field(
        default=None, min_length=1, max_length=128, description="FIFO queues: the group."
    )
    message_attributes: dict[str, str] = Field(
        default_factory=dict,
        description=f"String message attributes (at most {MOST_USER_ATTRIBUTES}; tickwork adds "
        f"{len(OWN_ATTRIBUTES)} of its own, named tickwork-…).",
    )
    delay_seconds: int = Field(default=0, ge=0, le=900, description="Standard queues only.")

    @field_validator("queue_arn")
    @classmethod
    def _queue(cls, value: str) -> str:
        parse_arn(value, "sqs", r"[A-Za-z0-9_-]{1,80}(\.fifo)?", _EXAMPLE)
        return value

    @field_validator("message_body")
    @classmethod
    def _body(cls, value: JsonValue) -> JsonValue:
        return check_body(value, "message body")

    @field_validator("message_attributes")
    @classmethod
    def _attributes(cls, value: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        return check_attributes(value, info, "SQS")

    @property
    def target(self) -> Arn:
        return parse_arn(self.queue_arn, "sqs", r".+", _EXAMPLE)

    @property
    def fifo(self) -> bool:
        return self.queue_arn.endswith(".fifo")


class SqsMessageFulfillment:
    action_type: ClassVar[str] = "SQS_MESSAGE"
    data_model: ClassVar[type[BaseModel]] = SqsMessageData

    @classmethod
    def built(cls, delivery: Delivery) -> SqsMessageFulfillment:
        return cls(delivery.targets)

    def __init__(self, clients: TargetClients) -> None:
        self._clients = clients

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        data = SqsMessageData.model_validate(request.data)
        arn = data.target
        send: dict[str, Any] = {
            "QueueUrl": queue_url(arn.partition, arn.region, arn.account, arn.name),
            **message_fields(data.message_body, data.message_attributes, request, "MessageBody"),
        }
        if data.fifo:
            send.update(fifo_fields(data.message_group_id, request))
        elif data.delay_seconds:
            send["DelaySeconds"] = data.delay_seconds
        with calling(f"SendMessage to {arn.text}"):
            answer = self._clients.client("sqs", request.role_arn).send_message(**send)
        return message_result(answer)
