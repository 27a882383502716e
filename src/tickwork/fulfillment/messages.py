"""What SQS_MESSAGE and SNS_MESSAGE share: a message body that is a string or JSON, string
message attributes beside tickwork's own, FIFO fields keyed on the fire, and the answer's ids."""

from __future__ import annotations

import json
from typing import Any

from pydantic import JsonValue

from tickwork.fulfillment.arns import check_size
from tickwork.fulfillment.base import FulfillmentRequest, data_problem
from tickwork.fulfillment.targets import fifo_group, identity_attributes

__all__ = ["check_attributes", "check_body", "fifo_fields", "message_fields", "message_result"]

OWN_PREFIX = "tickwork-"  # message attributes tickwork sets: the fire's identity


def check_body(value: JsonValue, what: str) -> JsonValue:
    """Validator: a body that is not empty and fits the service's size limit."""
    if value is None or value == "":
        raise data_problem(f"the {what} is empty", f"give a {what} to send")
    check_size(value, what)
    return value


def check_attributes(value: dict[str, str], most: int) -> dict[str, str]:
    """Validator: at most ``most`` attributes of the user's, none named like tickwork's own."""
    if len(value) > most or any(name.startswith(OWN_PREFIX) for name in value):
        raise data_problem(
            "too many message attributes, or one named tickwork-…",
            f"give at most {most}, none named tickwork-… (tickwork's own)",
        )
    return value


def message_fields(
    body: JsonValue, attributes: dict[str, str], request: FulfillmentRequest, body_field: str
) -> dict[str, Any]:
    """The body (a string as it is, anything else as JSON) and every attribute, the fire's too."""
    every = {**attributes, **identity_attributes(request)}
    return {
        body_field: body if isinstance(body, str) else json.dumps(body),
        "MessageAttributes": {
            name: {"DataType": "String", "StringValue": value} for name, value in every.items()
        },
    }


def fifo_fields(group: str | None, request: FulfillmentRequest) -> dict[str, str]:
    """A FIFO queue's or topic's group (the one given, else the action's id) and deduplication
    id (the fire's idempotency key: a repeated attempt is delivered once)."""
    return {
        "MessageGroupId": fifo_group(group, request.action_id),
        "MessageDeduplicationId": request.idempotency_key,
    }


def message_result(answer: dict[str, Any]) -> dict[str, Any]:
    result = {"messageId": answer["MessageId"]}
    if "SequenceNumber" in answer:
        result["sequenceNumber"] = answer["SequenceNumber"]
    return result
