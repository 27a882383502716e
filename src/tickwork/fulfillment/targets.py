"""What the AWS action types share: a data model naming its target by ARN, the fire's identity
handed to every target, and AWS errors turned into retried or final failures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, ClassVar

from pydantic import ConfigDict
from pydantic.alias_generators import to_camel

from tickwork.domain.times import iso
from tickwork.fulfillment.arns import Arn
from tickwork.fulfillment.aws_errors import classified
from tickwork.fulfillment.base import FulfillmentData, FulfillmentRequest, data_problem
from tickwork.fulfillment.endpoints import fifo_group

__all__ = [
    "FIRE_ATTRIBUTE",
    "IDENTITY_MEMBER",
    "TargetData",
    "calling",
    "fifo_group",
    "fire_attribute",
    "fire_json",
    "identity_attributes",
    "with_identity",
]

IDENTITY_MEMBER = "tickwork"  # the member of a JSON object target input that names the fire
FIRE_ATTRIBUTE = "tickwork-fire"  # the message attribute of the fire's time, attempt and trigger


class TargetData(FulfillmentData):
    """The ``data`` of an action type that sends to an AWS resource named by ARN."""

    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel)
    service: ClassVar[str]  # the IAM service prefix, as in the stack's allow-lists
    arn_field: ClassVar[str]  # the field naming the target, as the event spells it

    @property
    def target(self) -> Arn:
        raise NotImplementedError


def identity(request: FulfillmentRequest) -> dict[str, Any]:
    return {
        "id": request.action_id,
        "occurrence": request.occurrence,
        "scheduledTime": iso(request.scheduled_time),
        "idempotencyKey": request.idempotency_key,
        "attempt": request.attempt,
        "trigger": request.trigger,
    }


def with_identity(value: dict[str, Any], request: FulfillmentRequest) -> dict[str, Any]:
    """A JSON object target input with the fire's identity as one more member."""
    return {**value, IDENTITY_MEMBER: identity(request)}


def refuse_identity_member(value: Any, what: str) -> Any:
    """Validator: the object must be one, and must leave the identity member to tickwork."""
    if not isinstance(value, dict):
        raise data_problem(
            f"the {what} must be a JSON object: tickwork adds the fire's identity to it as "
            f"the member {IDENTITY_MEMBER!r}",
            f'send the {what} as an object; wrap any other value, e.g. {{"value": [1, 2]}}',
        )
    if IDENTITY_MEMBER in value:
        raise data_problem(
            f"the {what} member {IDENTITY_MEMBER!r} is set by tickwork (the fire's identity)",
            f"rename it; tickwork adds {IDENTITY_MEMBER!r} with the fire's idempotency key",
        )
    return value


def identity_attributes(request: FulfillmentRequest) -> dict[str, str]:
    """The fire's identity as message attributes (SQS, SNS): the body is left as it is. The
    fire's time, attempt and trigger ride in one more, ``fire_attribute``, when there is room."""
    return {
        "tickwork-idempotency-key": request.idempotency_key,
        "tickwork-action-id": request.action_id,
        "tickwork-occurrence": str(request.occurrence),
    }


def fire_attribute(request: FulfillmentRequest) -> dict[str, str]:
    """The message attribute ``tickwork-fire`` of a fire (``fire_json``)."""
    return {FIRE_ATTRIBUTE: fire_json(request.scheduled_time, request.attempt, request.trigger)}


def fire_json(scheduled_time: datetime, attempt: int, trigger: str) -> str:
    """``tickwork-fire``'s value: compact JSON of the fire's scheduled time (a backfilled or
    caught-up fire's own past one), its attempt (1, 2, … on the retries of one fire) and its
    trigger, e.g. ``{"scheduledTime":"2026-11-23T09:00:00.000Z","attempt":2,"trigger":
    "SCHEDULED"}``: one attribute, so a message keeps room for the user's own."""
    fire = {"scheduledTime": iso(scheduled_time), "attempt": attempt, "trigger": trigger}
    return json.dumps(fire, separators=(",", ":"))


@contextmanager
def calling(target: str) -> Iterator[None]:
    """Turn what the AWS call raises into a transient or permanent fulfillment error."""
    try:
        yield
    except Exception as error:
        converted = classified(error, target)
        if converted is error:
            raise
        raise converted from error
