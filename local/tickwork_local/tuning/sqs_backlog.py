"""A queue's backlog is read only as far as a receive or a batch delete needs.

Found: ``moto/sqs/models.py``: ``SQSBackend.delete_message`` looks for its receipt handle in
every message of the queue and rebuilds the queue's list, once per entry of a
``DeleteMessageBatch``; ``Queue.messages`` lists every visible message, through two clock reads
per message, before a receive takes its ten. With 100,000 Starts waiting in a function's queue
the Start function ran at 9 a second.

Replaced: ``SQSBackend.delete_message_batch`` looks only at messages that were received (near
the front) until it has found its handles, and answers per entry as moto does (a handle
deleted twice is a success, an unknown one ``ReceiptHandleIsInvalid``); ``Queue.messages``
yields visible messages as they are read, with one clock read. Upstreamable as is.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["backlogs_read_once"]


class _Visible:
    """A queue's visible messages (not hidden, not delayed), found as they are read: a receive
    that wants 10 stops at the 10th instead of listing the whole backlog first."""

    def __init__(self, messages: list[Any]) -> None:
        self._messages = list(messages)  # the queue's list as it is now, as moto's copy was
        self._now = time.time() * 1000.0  # Message.visible and .delayed, with one clock read

    def __iter__(self) -> Iterator[Any]:
        now = self._now
        return (m for m in self._messages if m.visible_at < now and not now < m.delayed_until)

    def __bool__(self) -> bool:
        return any(True for _ in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@contextmanager
def backlogs_read_once() -> Iterator[None]:
    from moto.sqs.models import Queue, SQSBackend

    def messages(queue: Queue) -> _Visible:
        return _Visible(queue._messages)

    def delete_message_batch(
        backend: SQSBackend, queue_name: str, receipts: list[dict[str, Any]]
    ) -> tuple[list[str], list[dict[str, str]]]:
        queue = backend.get_queue(queue_name)
        wanted = {r["ReceiptHandle"] for r in receipts}
        done = wanted & queue.deleted_messages  # deleting twice is not an error
        left = wanted - done
        found: list[int] = []
        for at, message in enumerate(queue._messages):  # received ones are near the front
            if not left:
                break
            if message.receipt_handle is None:
                continue  # never received: it has no handle
            handles: list[Any] = [message.receipt_handle, *message._old_receipt_handles]
            if left.isdisjoint(handles):
                continue
            left.difference_update(handles)
            done.update(wanted.intersection(handles))
            queue.pending_messages.discard(message)
            queue.deleted_messages.update(handles)
            found.append(at)
        for at in reversed(found):
            del queue._messages[at]
        success, errors = [], []
        for receipt in receipts:
            if receipt["ReceiptHandle"] in done:
                success.append(receipt["Id"])
            else:
                errors.append(
                    {
                        "Id": receipt["Id"],
                        "SenderFault": True,
                        "Code": "ReceiptHandleIsInvalid",
                        "Message": f'The input receipt handle "{receipt["ReceiptHandle"]}" is '
                        "not a valid receipt handle.",
                    }
                )
        return success, errors

    with (
        mock.patch.object(Queue, "messages", property(messages)),
        mock.patch.object(SQSBackend, "delete_message_batch", delete_message_batch),
    ):
        yield
