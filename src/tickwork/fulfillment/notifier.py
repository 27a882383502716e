"""The log-only notifier of SEND_NOTIFICATION, for development (the port is
``tickwork.ports.Notifier``).

Kept apart from the notification fulfillment (and its models) so that the bootstrap names it
without building them at a cold start.
"""

from __future__ import annotations

import logging
import threading

from tickwork.domain.times import iso
from tickwork.ports.notifier import Notification

__all__ = ["LoggingNotifier"]


class LoggingNotifier:
    """Logs each notification instead of sending it, and keeps it in memory: a development
    setting (``NOTIFICATION_DELIVERY=log``), never a silent default.

    Like a provider honouring idempotency keys, it records a retried fire once and answers
    with the first message id.
    """

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self._logger = logger or logging.getLogger(__name__)
        self._lock = threading.Lock()
        self._sent: list[Notification] = []
        self._ids: dict[str, str] = {}

    @property
    def sent(self) -> list[Notification]:
        with self._lock:
            return list(self._sent)

    def template_fields(self, notification_type: str, template_type: str) -> frozenset[str] | None:
        """Logged notifications have no templates to check data against."""
        return None

    def send(self, notification: Notification) -> str:
        with self._lock:
            known = self._ids.get(notification.idempotency_key)
            if known is not None:
                return known
            message_id = f"logged-{len(self._sent) + 1}"
            self._sent.append(notification)
            self._ids[notification.idempotency_key] = message_id
        self._logger.info(
            "notification logged, not sent (NOTIFICATION_DELIVERY=log)",
            extra={
                "message_id": message_id,
                "notification_type": notification.notification_type,
                "template_type": notification.template_type,
                "action_id": notification.action_id,
                "idempotency_key": notification.idempotency_key,
                "occurrence": notification.occurrence,
                "scheduled_time": iso(notification.scheduled_time),
                "attempt": notification.attempt,
                "trigger": notification.trigger,
            },
        )
        return message_id
