"""SNS_MESSAGE: a message published to a topic. A FIFO topic gets a message group (by default the
action's id) and the fire's idempotency key as its deduplication id. The fire's identity rides
in message attributes."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import BaseModel, Field, JsonValue, field_validator

from tickwork.fulfillment.arns import Arn, check_size, parse_arn
from tickwork.fulfillment.base import FulfillmentRequest, data_problem
from tickwork.fulfillment.targets import TargetData, calling, fifo_group, identity_attributes
from tickwork.ports import TargetClients

__all__ = ["SnsMessageData", "SnsMessageFulfillment"]

_EXAMPLE = "arn:aws:sns:us-east-1:123456789012:price-changes"


class SnsMessageData(TargetData):
    """A message published to an SNS topic. A FIFO topic (.fifo) gets MessageGroupId and
    MessageDeduplicationId (the fire's idempotency key), as a FIFO queue does. The fire rides in
    message attributes tickwork-idempotency-key, tickwork-action-id and tickwork-occurrence."""

    service: ClassVar[str] = "sns"
    arn_field: ClassVar[str] = "topicArn"

    topic_arn: str = Field(description=f"The topic, e.g. {_EXAMPLE}.")
    message: JsonValue = Field(description="A string is sent as it is, anything else as JSON.")
    subject: str | None = Field(default=None, min_length=1, max_length=100)
    message_group_id: str | None = Field(default=None, min_length=1, max_length=128)
    message_attributes: dict[str, str] = Field(default_factory=dict)

    @field_validator("topic_arn")
    @classmethod
    def _topic(cls, value: str) -> str:
        parse_arn(value, "sns", r"[A-Za-z0-9_-]{1,256}(\.fifo)?", _EXAMPLE)
        return value

    @field_validator("message")
    @classmethod
    def _message_size(cls, value: JsonValue) -> JsonValue:
        if value is None or value == "":
            raise data_problem("the message is empty", "give a message to publish")
        check_size(value, "message")
        return value

    @field_validator("message_attributes")
    @classmethod
    def _attributes(cls, value: dict[str, str]) -> dict[str, str]:
        if any(name.startswith("tickwork-") for name in value):
            raise data_problem(
                "a message attribute is named tickwork-…", "rename it: tickwork sets those"
            )
        return value

    @property
    def target(self) -> Arn:
        return parse_arn(self.topic_arn, "sns", r".+", _EXAMPLE)


class SnsMessageFulfillment:
    action_type: ClassVar[str] = "SNS_MESSAGE"
    data_model: ClassVar[type[BaseModel]] = SnsMessageData

    def __init__(self, clients: TargetClients) -> None:
        self._clients = clients

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        data = SnsMessageData.model_validate(request.data)
        attributes = {**data.message_attributes, **identity_attributes(request)}
        message = data.message
        publish: dict[str, Any] = {
            "TopicArn": data.topic_arn,
            "Message": message if isinstance(message, str) else json.dumps(message),
            "MessageAttributes": {
                name: {"DataType": "String", "StringValue": value}
                for name, value in attributes.items()
            },
        }
        if data.subject:
            publish["Subject"] = data.subject
        if data.topic_arn.endswith(".fifo"):
            publish["MessageGroupId"] = fifo_group(data.message_group_id, request.action_id)
            publish["MessageDeduplicationId"] = request.idempotency_key
        with calling(f"Publish to {data.topic_arn}"):
            answer = self._clients.client("sns", request.role_arn).publish(**publish)
        result = {"messageId": answer["MessageId"]}
        if "SequenceNumber" in answer:
            result["sequenceNumber"] = answer["SequenceNumber"]
        return result
