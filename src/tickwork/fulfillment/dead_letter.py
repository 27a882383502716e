"""A fire that failed for good, sent to its action's dead-letter queue (``deadLetterArn``), as
EventBridge Scheduler sends what it could not deliver to a schedule's ``DeadLetterConfig``.

The body is the fire, as JSON: the action, its occurrence and scheduled time, the attempts
made, the last error, the idempotency key and the execution. The message attributes are
EventBridge Scheduler's (``ERROR_CODE``, ``ERROR_MESSAGE``, ``EXECUTION_ID``,
``RETRY_ATTEMPTS``) beside tickwork's identity (``tickwork-action-id``,
``tickwork-occurrence``, ``tickwork-idempotency-key``). A FIFO queue gets the action's id as
its group and the key as its deduplication id. The stack's own role sends it.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tickwork.domain.times import iso
from tickwork.fulfillment.endpoints import fifo_group, queue_url
from tickwork.ports import TargetClients

__all__ = ["DeadLetter", "send_dead_letter"]

log = logging.getLogger("tickwork")
_MAX_ATTRIBUTE = 256  # what EventBridge Scheduler keeps of an error message


@dataclass(frozen=True)
class DeadLetter:
    """One failed fire, as its dead-letter message carries it."""

    action_id: str
    action: str
    group: str
    generation: int
    occurrence: int
    scheduled_time: datetime
    failed_at: datetime
    attempts: int
    error: str
    error_message: str
    idempotency_key: str
    execution_arn: str
    trigger: str
    manual: int = 0

    def body(self) -> dict[str, Any]:
        return {
            "actionId": self.action_id,
            "action": self.action,
            "group": self.group,
            "generation": self.generation,
            "occurrence": self.occurrence,
            "manual": self.manual,
            "trigger": self.trigger,
            "scheduledTime": iso(self.scheduled_time),
            "failedAt": iso(self.failed_at),
            "attempts": self.attempts,
            "error": self.error,
            "errorMessage": self.error_message,
            "idempotencyKey": self.idempotency_key,
            "executionArn": self.execution_arn,
        }


_SQS_TEXT = re.compile(r"[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _printable(text: str) -> str:
    """``text`` as SQS takes a message's text: characters it refuses (controls, U+FFFE, U+FFFF)
    shown as U+FFFD (a target's answer may hold any)."""
    return _SQS_TEXT.sub("\ufffd", text)


def send_dead_letter(targets: TargetClients, queue_arn: str, letter: DeadLetter) -> bool:
    """Send ``letter`` to ``queue_arn``; False (logged) when the queue refuses it: the fire
    stays recorded FAILED and announced, whatever becomes of its letter."""
    # checked when the action was scheduled (domain.start_request): arn:<partition>:sqs:...
    _, partition, _, region, account, queue = queue_arn.split(":", 5)
    attributes = {
        "ERROR_CODE": _printable(letter.error),
        "ERROR_MESSAGE": _printable(letter.error_message)[:_MAX_ATTRIBUTE] or letter.error,
        "EXECUTION_ID": letter.execution_arn or "-",
        "RETRY_ATTEMPTS": str(max(letter.attempts - 1, 0)),
        "tickwork-action-id": letter.action_id,
        "tickwork-occurrence": str(letter.occurrence),
        "tickwork-idempotency-key": letter.idempotency_key,
    }
    send: dict[str, Any] = {
        "QueueUrl": queue_url(partition, region, account, queue),
        "MessageBody": json.dumps(letter.body()),  # JSON escapes what SQS would refuse
        "MessageAttributes": {
            key: {"DataType": "String", "StringValue": value} for key, value in attributes.items()
        },
    }
    if queue.endswith(".fifo"):
        send["MessageGroupId"] = fifo_group(None, letter.action_id)
        send["MessageDeduplicationId"] = letter.idempotency_key
    try:
        targets.client("sqs").send_message(**send)
    except Exception:  # any refusal: logged, the failure stays recorded and announced
        log.exception("dead letter of %s to %s not sent", letter.action_id, queue_arn)
        return False
    return True
