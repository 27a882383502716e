"""SNS_MESSAGE: a message published to a topic. A FIFO topic gets a message group (by default the
action's id) and the fire's idempotency key as its deduplication id. The fire rides in message
attributes (``messages``)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field, JsonValue, ValidationInfo, field_validator

from tickwork.fulfillment.arns import Arn, parse_arn
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.fulfillment.delivery import Delivery
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

__all__ = ["SnsMessageData", "SnsMessageFulfillment"]

_EXAMPLE = "arn:aws:sns:us-east-1:123456789012:price-changes"


class SnsMessageData(TargetData):
    """A message published to an SNS topic. A FIFO topic (.fifo) gets MessageGroupId and
    MessageDeduplicationId (the fire's idempotency key), as a FIFO queue does. The fire rides in
    message attributes tickwork-idempotency-key, tickwork-action-id, tickwork-occurrence and
    tickwork-fire (JSON: scheduledTime, attempt, trigger), leaving 6 of SNS's 10 to the action."""

    service: ClassVar[str] = "sns"
    arn_field: ClassVar[str] = "topicArn"

    topic_arn: str = Field(description=f"The topic, e.g. {_EXAMPLE}.")
    message: JsonValue = Field(description="A string is sent as it is, anything else as JSON.")
    subject: str | None = Field(default=None, min_length=1, max_length=100)
    message_group_id: str | None = Field(default=None, min_length=1, max_length=128)
    message_attributes: dict[str, str] = Field(
        default_factory=dict,
        description=f"String message attributes (at most {MOST_USER_ATTRIBUTES}; tickwork adds "
        f"{len(OWN_ATTRIBUTES)} of its own, named tickwork-…).",
    )

    @field_validator("topic_arn")
    @classmethod
    def _topic(cls, value: str) -> str:
        parse_arn(value, "sns", r"[A-Za-z0-9_-]{1,256}(\.fifo)?", _EXAMPLE)
        return value

    @field_validator("message")
    @classmethod
    def _message(cls, value: JsonValue) -> JsonValue:
        return check_body(value, "message")

    @field_validator("message_attributes")
    @classmethod
    def _attributes(cls, value: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        return check_attributes(value, info, "SNS")

    @property
    def target(self) -> Arn:
        return parse_arn(self.topic_arn, "sns", r".+", _EXAMPLE)


class SnsMessageFulfillment:
    action_type: ClassVar[str] = "SNS_MESSAGE"
    data_model: ClassVar[type[BaseModel]] = SnsMessageData

    @classmethod
    def built(cls, delivery: Delivery) -> SnsMessageFulfillment:
        return cls(delivery.targets)

    def __init__(self, clients: TargetClients) -> None:
        self._clients = clients

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        data = SnsMessageData.model_validate(request.data)
        publish: dict[str, Any] = {
            "TopicArn": data.topic_arn,
            **message_fields(data.message, data.message_attributes, request, "Message"),
        }
        if data.subject:
            publish["Subject"] = data.subject
        if data.topic_arn.endswith(".fifo"):
            publish.update(fifo_fields(data.message_group_id, request))
        with calling(f"Publish to {data.topic_arn}"):
            answer = self._clients.client("sns", request.role_arn).publish(**publish)
        return message_result(answer)
