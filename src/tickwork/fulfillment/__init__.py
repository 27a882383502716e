"""Fulfillments: what each action type does when it fires, and the registry that finds it.

Names are imported from their modules at first access (PEP 562), so importing one submodule
(the registry, say) does not import every fulfillment and pydantic with it.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "Fulfillment": "base",
    "FulfillmentData": "base",
    "FulfillmentRequest": "base",
    "data_problem": "base",
    "default_registry": "defaults",
    "HttpRequestData": "http_request",
    "HttpRequestFulfillment": "http_request",
    "LoggingNotifier": "notifier",
    "NotificationData": "notification",
    "NotificationFulfillment": "notification",
    "FulfillmentRegistry": "registry",
    "validate_data": "registry",
    "TickData": "tick",
    "TickFulfillment": "tick",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
