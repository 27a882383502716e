"""What SQS_MESSAGE and SNS_MESSAGE share: a message body that is a string or JSON, string
message attributes beside tickwork's own, FIFO fields keyed on the fire, and the answer's ids.

A message takes at most 10 attributes (SQS and SNS alike). tickwork sends 4: the fire's
identity (``tickwork-idempotency-key``, ``tickwork-action-id``, ``tickwork-occurrence``) and
``tickwork-fire`` (its scheduled time, attempt and trigger), so an action sets at most 6 of its
own. An action taken when tickwork sent 3 may hold 7: its stored data is still valid at its
fire (``base.is_stored``), and its messages go without ``tickwork-fire``, never without one of
the action's own.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import JsonValue, ValidationInfo

from tickwork.fulfillment.arns import check_size
from tickwork.fulfillment.base import FulfillmentRequest, data_problem, is_stored
from tickwork.fulfillment.targets import (
    FIRE_ATTRIBUTE,
    fifo_group,
    fire_attribute,
    identity_attributes,
)

__all__ = [
    "MOST_ATTRIBUTES",
    "MOST_USER_ATTRIBUTES",
    "OWN_ATTRIBUTES",
    "check_attributes",
    "check_body",
    "fifo_fields",
    "message_fields",
    "message_result",
]

OWN_PREFIX = "tickwork-"  # message attributes tickwork sets: the fire's identity
MOST_ATTRIBUTES = 10  # what SQS and SNS take on one message
OWN_ATTRIBUTES = (  # tickwork's, on every message: the fire's identity, then tickwork-fire
    "tickwork-idempotency-key",
    "tickwork-action-id",
    "tickwork-occurrence",
    FIRE_ATTRIBUTE,
)
MOST_USER_ATTRIBUTES = MOST_ATTRIBUTES - len(OWN_ATTRIBUTES)  # 6: what a Start may set
# 7: what an action taken before tickwork-fire may hold; its messages go without that one
MOST_STORED_USER_ATTRIBUTES = MOST_USER_ATTRIBUTES + 1


def check_body(value: JsonValue, what: str) -> JsonValue:
    """Validator: a body that is not empty and fits the service's size limit."""
    if value is None or value == "":
        raise data_problem(f"the {what} is empty", f"give a {what} to send")
    check_size(value, what)
    return value


def check_attributes(value: dict[str, str], info: ValidationInfo, service: str) -> dict[str, str]:
    """Validator: none named like tickwork's own, and at most ``MOST_USER_ATTRIBUTES`` of the
    user's (``MOST_STORED_USER_ATTRIBUTES`` in an action's stored data, read at its fire)."""
    named = sorted(name for name in value if name.startswith(OWN_PREFIX))
    if named:
        raise data_problem(
            f"{named[0]!r} is named like tickwork's own message attributes (tickwork-…)",
            f"rename it; tickwork sets {', '.join(OWN_ATTRIBUTES)}",
        )
    most = MOST_STORED_USER_ATTRIBUTES if is_stored(info) else MOST_USER_ATTRIBUTES
    if len(value) > most:
        raise data_problem(
            f"has {len(value)} message attributes, more than the {most} an action may set: "
            f"{service} takes {MOST_ATTRIBUTES} on a message and tickwork sends "
            f"{len(OWN_ATTRIBUTES)} of its own ({', '.join(OWN_ATTRIBUTES)})",
            f"keep at most {most} in data.messageAttributes and move the others into the "
            "message body",
        )
    return value


def message_fields(
    body: JsonValue, attributes: dict[str, str], request: FulfillmentRequest, body_field: str
) -> dict[str, Any]:
    """The body (a string as it is, anything else as JSON) and every attribute, the fire's
    too: its identity always, and ``tickwork-fire`` when the message has room for it (an action
    stored with 7 of its own, taken before tickwork sent it, goes without)."""
    every = {**attributes, **identity_attributes(request)}
    if len(every) < MOST_ATTRIBUTES:
        every.update(fire_attribute(request))
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
