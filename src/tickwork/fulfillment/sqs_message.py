"""SQS_MESSAGE: a message to a queue. A FIFO queue gets a message group (``messageGroupId``, by
default the action's id) and the fire's idempotency key as its deduplication id, so a repeated
attempt is delivered once. The fire's identity rides in message attributes."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import BaseModel, Field, JsonValue, field_validator

from tickwork.fulfillment.arns import Arn, check_size, parse_arn
from tickwork.fulfillment.base import FulfillmentRequest, data_problem
from tickwork.fulfillment.targets import TargetData, calling, fifo_group, identity_attributes
from tickwork.ports import TargetClients

__all__ = ["SqsMessageData", "SqsMessageFulfillment"]

_EXAMPLE = "arn:aws:sqs:us-east-1:123456789012:invoices.fifo"
_MAX_USER_ATTRIBUTES = 7  # SQS takes 10; tickwork's identity takes 3


class SqsMessageData(TargetData):
    """A message sent to an SQS queue. A FIFO queue (.fifo) gets MessageGroupId (messageGroupId,
    else the action's id) and MessageDeduplicationId (the fire's idempotency key): a repeated
    attempt is delivered once. The fire rides in message attributes tickwork-idempotency-key,
    tickwork-action-id and tickwork-occurrence."""

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
        default_factory=dict, description="String message attributes (at most 7)."
    )
    delay_seconds: int = Field(default=0, ge=0, le=900, description="Standard queues only.")

    @field_validator("queue_arn")
    @classmethod
    def _queue(cls, value: str) -> str:
        parse_arn(value, "sqs", r"[A-Za-z0-9_-]{1,80}(\.fifo)?", _EXAMPLE)
        return value

    @field_validator("message_body")
    @classmethod
    def _body_size(cls, value: JsonValue) -> JsonValue:
        if value is None or value == "":
            raise data_problem("the message body is empty", "give a body to send")
        check_size(value, "message body")
        return value

    @field_validator("message_attributes")
    @classmethod
    def _attributes(cls, value: dict[str, str]) -> dict[str, str]:
        if len(value) > _MAX_USER_ATTRIBUTES or any(k.startswith("tickwork-") for k in value):
            raise data_problem(
                "too many message attributes, or one named tickwork-…",
                f"give at most {_MAX_USER_ATTRIBUTES}, none named tickwork-… (tickwork's own)",
            )
        return value

    @property
    def target(self) -> Arn:
        return parse_arn(self.queue_arn, "sqs", r".+", _EXAMPLE)

    @property
    def fifo(self) -> bool:
        return self.queue_arn.endswith(".fifo")


class SqsMessageFulfillment:
    action_type: ClassVar[str] = "SQS_MESSAGE"
    data_model: ClassVar[type[BaseModel]] = SqsMessageData

    def __init__(self, clients: TargetClients) -> None:
        self._clients = clients

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        data = SqsMessageData.model_validate(request.data)
        arn = data.target
        body = data.message_body
        attributes = {**data.message_attributes, **identity_attributes(request)}
        send: dict[str, Any] = {
            "QueueUrl": f"https://sqs.{arn.region}.{arn.domain}/{arn.account}/{arn.name}",
            "MessageBody": body if isinstance(body, str) else json.dumps(body),
            "MessageAttributes": {
                name: {"DataType": "String", "StringValue": value}
                for name, value in attributes.items()
            },
        }
        if data.fifo:
            send["MessageGroupId"] = fifo_group(data.message_group_id, request.action_id)
            send["MessageDeduplicationId"] = request.idempotency_key
        elif data.delay_seconds:
            send["DelaySeconds"] = data.delay_seconds
        with calling(f"SendMessage to {arn.text}"):
            answer = self._clients.client("sqs", request.role_arn).send_message(**send)
        result = {"messageId": answer["MessageId"]}
        if "SequenceNumber" in answer:
            result["sequenceNumber"] = answer["SequenceNumber"]
        return result
