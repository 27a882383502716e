"""The built-in action types. Adding one: write its module, register it here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tickwork.fulfillment.registry import FulfillmentRegistry

if TYPE_CHECKING:
    from tickwork.fulfillment.notification import Notifier

__all__ = ["default_registry"]


def default_registry(
    notifier: Notifier | None = None,
    http_secret: bytes | Callable[[], bytes | None] | None = None,
    allow_private_targets: bool = True,
) -> FulfillmentRegistry:
    """``allow_private_targets`` is for tests and the local stack; wiring passes the
    deployed stack's setting (private targets refused unless AllowPrivateTargets).

    The fulfillment modules are imported when the registry is first used, not here."""

    def build(registry: FulfillmentRegistry) -> None:
        from tickwork.fulfillment.http_request import HttpRequestFulfillment
        from tickwork.fulfillment.notification import NotificationFulfillment, RecordingNotifier
        from tickwork.fulfillment.tick import TickFulfillment

        registry.register(TickFulfillment())
        registry.register(NotificationFulfillment(notifier or RecordingNotifier()))
        registry.register(
            HttpRequestFulfillment(secret=http_secret, allow_private=allow_private_targets)
        )

    return FulfillmentRegistry(build)
