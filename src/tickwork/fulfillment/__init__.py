"""Fulfillments: what each action type does when it fires, and the registry that finds it."""

from __future__ import annotations

from tickwork.fulfillment.base import (
    Fulfillment,
    FulfillmentData,
    FulfillmentRequest,
    data_problem,
)
from tickwork.fulfillment.defaults import default_registry
from tickwork.fulfillment.http_request import HttpRequestData, HttpRequestFulfillment
from tickwork.fulfillment.notification import (
    Notification,
    NotificationData,
    NotificationFulfillment,
    Notifier,
    RecordingNotifier,
)
from tickwork.fulfillment.registry import FulfillmentRegistry
from tickwork.fulfillment.signature import SIGNATURE_HEADER, verify_signature
from tickwork.fulfillment.tick import TickData, TickFulfillment

__all__ = [
    "SIGNATURE_HEADER",
    "Fulfillment",
    "FulfillmentData",
    "FulfillmentRegistry",
    "FulfillmentRequest",
    "HttpRequestData",
    "HttpRequestFulfillment",
    "Notification",
    "NotificationData",
    "NotificationFulfillment",
    "Notifier",
    "RecordingNotifier",
    "TickData",
    "TickFulfillment",
    "data_problem",
    "default_registry",
    "verify_signature",
]
