"""What the built-in action types deliver through, and how one is built from it
(``defaults.builtin_fulfillments`` names each): light, so that the bootstrap names them without
loading the types' data models."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from pydantic import BaseModel

    from tickwork.fulfillment.base import Fulfillment, FulfillmentRequest
    from tickwork.ports import TargetClients
    from tickwork.ports.notifier import Notifier

__all__ = ["BuiltIn", "Delivery"]


@dataclass(frozen=True)
class Delivery:
    """What the built-in action types deliver through, as the bootstrap gives it: each type's
    ``built`` takes the part it needs."""

    notifier: Notifier
    http_secret: Callable[[], bytes | None] | None
    allow_private_targets: bool
    targets: TargetClients


class BuiltIn(Protocol):
    """A built-in action type's fulfillment: named in ``defaults.builtin_fulfillments``, built
    from what the stack delivers through."""

    @classmethod
    def built(cls, delivery: Delivery) -> Fulfillment: ...

    # what a built-in type's class also has (``Fulfillment``): its name, model and call
    action_type: ClassVar[str]
    data_model: ClassVar[type[BaseModel]]

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]: ...
