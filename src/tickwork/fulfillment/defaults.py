"""The built-in action types, named once in ``builtin_fulfillments``. Adding one: write its
module (a fulfillment whose ``built`` takes what it delivers through from ``Delivery``), and
name its class in that list."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tickwork.fulfillment.delivery import BuiltIn, Delivery
from tickwork.fulfillment.registry import FulfillmentRegistry
from tickwork.ports.notifier import Notifier

if TYPE_CHECKING:
    from pydantic import BaseModel

    from tickwork.ports import TargetClients

__all__ = ["builtin_data_models", "builtin_fulfillments", "default_registry"]


def default_registry(
    notifier: Notifier,
    http_secret: Callable[[], bytes | None] | None,
    allow_private_targets: bool,
    targets: TargetClients,
) -> FulfillmentRegistry:
    """Every built-in type, each given what it delivers through (the bootstrap passes them).

    ``http_secret`` is asked at the first signed request; ``allow_private_targets`` lets
    HTTP_REQUEST reach private addresses (the local stack's webhooks are on loopback);
    ``targets`` gives the AWS types their clients. The fulfillment modules are imported when
    the registry is first used, not here.
    """
    delivery = Delivery(notifier, http_secret, allow_private_targets, targets)

    def build(registry: FulfillmentRegistry) -> None:
        for kind in builtin_fulfillments():
            registry.register(kind.built(delivery))

    return FulfillmentRegistry(build)


def builtin_fulfillments() -> list[type[BuiltIn]]:
    """Each built-in action type's fulfillment class (nothing is built): the one list."""
    from tickwork.fulfillment.event_bus import EventBusFulfillment
    from tickwork.fulfillment.http_request import HttpRequestFulfillment
    from tickwork.fulfillment.lambda_invoke import LambdaInvokeFulfillment
    from tickwork.fulfillment.notification import NotificationFulfillment
    from tickwork.fulfillment.sns_message import SnsMessageFulfillment
    from tickwork.fulfillment.sqs_message import SqsMessageFulfillment
    from tickwork.fulfillment.step_functions import StepFunctionsFulfillment
    from tickwork.fulfillment.tick import TickFulfillment

    return [
        TickFulfillment,
        NotificationFulfillment,
        HttpRequestFulfillment,
        EventBusFulfillment,
        SqsMessageFulfillment,
        SnsMessageFulfillment,
        LambdaInvokeFulfillment,
        StepFunctionsFulfillment,
    ]


def builtin_data_models() -> dict[str, type[BaseModel]]:
    """Each built-in action type's data model, by type (for documents: nothing is built)."""
    return {kind.action_type: kind.data_model for kind in builtin_fulfillments()}
