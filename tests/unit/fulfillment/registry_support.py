"""The built-in registry as the fulfillment tests use it: log-only notifications, no signing
key, private addresses allowed (the tests' receivers are on loopback)."""

from __future__ import annotations

from tests.unit.fakes import NoTargets
from tickwork.fulfillment.defaults import default_registry
from tickwork.fulfillment.notifier import LoggingNotifier
from tickwork.fulfillment.registry import FulfillmentRegistry
from tickwork.ports.notifier import Notifier

__all__ = ["builtin_registry"]


def builtin_registry(notifier: Notifier | None = None) -> FulfillmentRegistry:
    return default_registry(
        notifier or LoggingNotifier(), None, allow_private_targets=True, targets=NoTargets()
    )
