"""SQS sends and receives do not count the whole queue for every message.

Found: ``moto/sqs/models.py``: ``SQSBackend.send_message`` reads ``Queue.attributes`` to learn
whether the queue deduplicates by content, and ``is_message_valid_based_on_retention_period``
reads them for each message a receive returns, to learn the retention period; computing them
counts every message in the queue, so a burst of N messages cost O(N²). SQS also reads the time
of day for every message through two datetime conversions (``unix_time``).

Replaced: a send to a standard queue (which has no ContentBasedDeduplication) skips the count;
the retention period is read from the queue itself; ``unix_time`` / ``unix_time_millis`` of
now read the clock directly (the same number). FIFO queues count and deduplicate as before.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["sends_without_counting"]


@contextmanager
def sends_without_counting() -> Iterator[None]:
    from moto.sqs import models as sqs_models
    from moto.sqs.models import Queue, SQSBackend

    sending = threading.local()
    counted = Queue.attributes
    original_send = SQSBackend.send_message
    original_time = sqs_models.unix_time

    def unix_time(dt: Any = None) -> float:
        return time.time() if dt is None else float(original_time(dt))

    def unix_time_millis(dt: Any = None) -> float:
        return unix_time(dt) * 1000.0

    def retained(backend: SQSBackend, queue_name: str, message: Any) -> bool:
        period = int(backend.get_queue(queue_name).message_retention_period)
        return bool(period + message.sent_timestamp / 1000 > time.time())

    def attributes(queue: Queue) -> dict[str, Any]:
        if getattr(sending, "depth", 0) and not queue.fifo_queue:
            # All a send reads of a standard queue's attributes is ContentBasedDeduplication,
            # which only FIFO queues have.
            return {}
        counts: dict[str, Any] = counted.fget(queue)
        return counts

    @functools.wraps(original_send)
    def send_message(backend: SQSBackend, *args: Any, **kwargs: Any) -> Any:
        sending.depth = getattr(sending, "depth", 0) + 1
        try:
            return original_send(backend, *args, **kwargs)
        finally:
            sending.depth -= 1

    with (
        mock.patch.object(Queue, "attributes", property(attributes)),
        mock.patch.object(SQSBackend, "send_message", send_message),
        mock.patch.object(SQSBackend, "is_message_valid_based_on_retention_period", retained),
        mock.patch.object(sqs_models, "unix_time", unix_time),
        mock.patch.object(sqs_models, "unix_time_millis", unix_time_millis),
    ):
        yield
