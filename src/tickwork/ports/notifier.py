"""Sending a notification (SMS, e-mail, push) for SEND_NOTIFICATION."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

__all__ = ["Notification", "Notifier"]


@dataclass(frozen=True)
class Notification:
    """One message to send, and the fire that sends it. ``idempotency_key`` is the same for
    every attempt of one fire; ``attempt`` counts them (1, then 2, … on its retries).
    ``occurrence`` and ``scheduled_time`` say which fire it is: a backfilled or caught-up one
    carries its own past scheduled time (and occurrence 0, as every fire asked for by hand but a
    retry); ``trigger`` says why it fired (SCHEDULED, RUN_NOW, RETRY, BACKFILL, CATCH_UP)."""

    notification_type: str
    recipient: str
    template_type: str
    subject: str | None
    name: str | None
    action_id: str
    idempotency_key: str
    occurrence: int
    scheduled_time: datetime  # aware, UTC
    attempt: int
    trigger: str
    template_data: dict[str, str] = field(default_factory=dict)  # fills the template


class Notifier(Protocol):
    """Sends a notification; returns the provider's message id.

    Raise ``TransientFulfillmentError`` for a failure worth retrying and
    ``PermanentFulfillmentError`` for one that is not; both reach the state machine as they are.
    """

    def send(self, notification: Notification) -> str: ...

    def template_fields(self, notification_type: str, template_type: str) -> frozenset[str] | None:
        """The ``{{placeholders}}`` of the template a notification of this kind would use, or
        ``None`` when it is not known (not put yet, or not readable here)."""
        ...
