"""Delivers EventBridge rule matches to our functions, as EventBridge's Lambda targets do.

moto's EventBridge delivers matches to SQS but not to Lambda. Each function rule gets its own
queue as target; a poller thread hands every message to the function in process. Pollers long
poll (moto wakes a waiting receive as soon as a message arrives), so a delivery is immediate and
an idle stack costs no CPU. A received message stays hidden while its batch is handled (a
busy stack must not hand it out twice); a handler that raises makes it visible again after
``retry_seconds`` (EventBridge's retry policy); after ``max_receives`` it goes to the
dead-letter queue, as the template's DeadLetterConfig would.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

__all__ = ["QueuePoller", "ScheduleRunner", "as_delivered"]

log = logging.getLogger(__name__)


def as_delivered(body: str, account: str) -> dict[str, Any]:
    """The event as EventBridge delivers it: moto leaves "account" out of the envelope."""
    event: dict[str, Any] = json.loads(body)
    event.setdefault("account", account)
    return event


class QueuePoller(threading.Thread):
    def __init__(
        self,
        sqs: Any,
        queue_url: str,
        deliver: Callable[[dict[str, Any]], str | None],
        dead_letter_url: str | None,
        account: str,
        max_receives: int = 5,
        wait_seconds: int = 1,
        retry_seconds: int = 1,
        hidden_seconds: int = 300,
    ) -> None:
        super().__init__(name=f"poll-{queue_url.rsplit('/', 1)[-1]}", daemon=True)
        self._sqs = sqs
        self.queue_url = queue_url
        self._deliver = deliver
        self._dead_letter_url = dead_letter_url
        self._account = account
        self._max_receives = max_receives
        self._wait = wait_seconds  # also how long stop() may take to be noticed
        self._retry = retry_seconds
        self._hidden = hidden_seconds  # while a received batch is being handled
        self._stopped = threading.Event()
        self.delivered = 0

    def stop(self) -> None:
        self._stopped.set()

    def run(self) -> None:
        while not self._stopped.is_set():
            try:
                self.poll_once(self._wait)
            except Exception:  # the emulator going away at shutdown, or a bug: keep polling
                if self._stopped.is_set():
                    return
                log.exception("poller %s failed", self.name)
                self._stopped.wait(self._wait)

    def poll_once(self, wait_seconds: int = 0) -> int:
        response = self._sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=10,
            AttributeNames=["ApproximateReceiveCount"],
            WaitTimeSeconds=wait_seconds,
            VisibilityTimeout=self._hidden,
        )
        messages = response.get("Messages", [])
        delivered: list[dict[str, str]] = []
        for message in messages:
            event = as_delivered(message["Body"], self._account)
            error_type = self._deliver(event)
            receives = int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1"))
            if error_type is None:
                delivered.append(
                    {"Id": str(len(delivered)), "ReceiptHandle": message["ReceiptHandle"]}
                )
                self.delivered += 1
            elif receives >= self._max_receives and self._dead_letter_url:
                log.warning(
                    "dead-lettering %s after %d deliveries (%s)",
                    event.get("id"),
                    receives,
                    error_type,
                )
                self._sqs.send_message(QueueUrl=self._dead_letter_url, MessageBody=message["Body"])
                self._sqs.delete_message(
                    QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"]
                )
            else:  # delivered again after the retry delay, as EventBridge retries a target
                self._sqs.change_message_visibility(
                    QueueUrl=self.queue_url,
                    ReceiptHandle=message["ReceiptHandle"],
                    VisibilityTimeout=self._retry,
                )
        if delivered:  # one call for the batch, as Lambda's poller deletes a batch it handled
            self._sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=delivered)
        return len(messages)


class ScheduleRunner(threading.Thread):
    """Runs a function on its EventBridge schedule (``rate(...)``), as a Schedule event does.

    moto keeps scheduled rules but never fires them.
    """

    def __init__(
        self, schedule: str, deliver: Callable[[dict[str, Any]], str | None], account: str
    ) -> None:
        from tickwork.domain.schedule.rate import parse_rate

        super().__init__(name=f"schedule-{schedule}", daemon=True)
        self.interval = parse_rate(schedule, "Schedule").total_seconds()
        self._deliver = deliver
        self._account = account
        self._stopped = threading.Event()
        self.runs = 0

    def stop(self) -> None:
        self._stopped.set()

    def run(self) -> None:
        while not self._stopped.wait(self.interval):
            event = {
                "version": "0",
                "id": str(uuid.uuid4()),
                "detail-type": "Scheduled Event",
                "source": "aws.events",
                "account": self._account,
                "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "region": "us-east-1",
                "resources": [],
                "detail": {},
            }
            try:
                self._deliver(event)
            except Exception:
                log.exception("scheduled run of %s failed", self.name)
            self.runs += 1
