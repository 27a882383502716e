"""Duplicate deliveries, the two ways EventBridge makes them:

- the same event delivered again (same EventId): its envelope is put straight into the
  function's delivery queue, as a redelivery to the Lambda target would arrive;
- the same detail published again (a producer retrying PutEvents: a new EventId).

Starts of ``dup-start`` actions get both; every Schedule Tick of a ``dup-tick`` action seen
on a subscribed queue is published again at once and its envelope redelivered a moment later.
The same subscription notes which actions got a DetailType.COMPLETED event.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from chaoskit.creation import START_SOURCE
from chaoskit.plan import ID_PREFIXES, Kind
from chaoskit.timeline import Timeline
from tickwork.domain.events import DetailType
from tickwork_local.process import LocalProcess

__all__ = ["StartDuplicator", "TickDuplicator"]

ACCOUNT = "123456789012"
TICK_SOURCE = "tickwork"
STACK_DOWN_LIMIT = 300.0  # a duplicate due while the stack restarts is sent once it is up


def _envelope(event_id: str, detail_type: str, source: str, detail: dict[str, Any]) -> str:
    return json.dumps(
        {
            "version": "0",
            "id": event_id,
            "detail-type": detail_type,
            "source": source,
            "account": ACCOUNT,
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "region": "us-east-1",
            "resources": [],
            "detail": detail,
        }
    )


class StartDuplicator:
    def __init__(self, stack: LocalProcess) -> None:
        self._stack = stack
        self.counts: Counter[str] = Counter()

    def redeliver(self, event_id: str, detail: dict[str, Any]) -> None:
        """The very Start event again (same EventId), into the start function's queue."""
        self._stack.up.wait(timeout=STACK_DOWN_LIMIT)
        self._stack.client("sqs").send_message(
            QueueUrl=self._stack.queue_url("-StartRule"),
            MessageBody=_envelope(event_id, DetailType.START, START_SOURCE, detail),
        )
        self.counts["start redelivered (same event id)"] += 1

    def republish(self, detail: dict[str, Any], latest: float) -> None:
        """The same detail published again (a new EventId), while the action is active.

        Not after ``latest``: a Start with the same detail replaces a finished action (a new
        chain of fires, by design), so a copy sent late would not be a duplicate any more.
        """
        self._stack.up.wait(timeout=STACK_DOWN_LIMIT)
        if time.time() > latest:
            self.counts["start republish skipped (run behind or stack down)"] += 1
            return
        if not self._stack.put_event(DetailType.START, START_SOURCE, detail):
            raise RuntimeError(f"bus refused the repeated Start of {detail.get('id')}")
        self.counts["start republished (new event id)"] += 1

    def post_again(self, detail: dict[str, Any]) -> int:
        """The same detail through the API: an existing id is refused with 409."""
        answer = self._stack.api.post(f"{self._stack.api_url}/actions", json=detail, timeout=60)
        self.counts[f"start POSTed again -> {answer.status_code}"] += 1
        return answer.status_code


class TickDuplicator(threading.Thread):
    """Watches Schedule Tick (and Completed) on a subscribed queue; duplicates the ticks of
    dup-tick actions."""

    def __init__(self, stack: LocalProcess, timeline: Timeline, seed: int) -> None:
        super().__init__(name="chaos-ticks", daemon=True)
        self._stack = stack
        self._timeline = timeline
        self._rng = random.Random(seed)
        self._prefix = f"{ID_PREFIXES[Kind.DUP_TICK]}-"
        self._seen: set[tuple[Any, ...]] = set()
        self._queue_url: str | None = None
        self._stopped = threading.Event()
        self.counts: Counter[str] = Counter()
        self.ticks_seen = 0
        self.completed: set[str] = set()  # ids with a Schedule Completed event

    def subscribe(self) -> None:
        """A worker's subscription: a queue and a bus rule (again after each restart)."""
        sqs, events = self._stack.client("sqs"), self._stack.client("events")
        name = f"chaos-ticks-{uuid.uuid4().hex[:8]}"
        url = sqs.create_queue(QueueName=name)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        pattern = {"detail-type": [DetailType.TICK, DetailType.COMPLETED], "source": [TICK_SOURCE]}
        events.put_rule(Name=name, EventBusName=self._stack.bus, EventPattern=json.dumps(pattern))
        events.put_targets(
            Rule=name, EventBusName=self._stack.bus, Targets=[{"Id": "chaos", "Arn": arn}]
        )
        self._queue_url = url

    def pause(self) -> None:
        """The stack is going away: its queues go with it."""
        self._queue_url = None

    def stop(self) -> None:
        self._stopped.set()

    def run(self) -> None:
        while not self._stopped.is_set():
            url = self._queue_url
            if url is None:
                self._stopped.wait(0.2)
                continue
            try:
                self._poll(url)
            except Exception:  # the stack restarting under us: try again shortly
                self._stopped.wait(0.5)

    def _poll(self, url: str) -> None:
        sqs = self._stack.client("sqs")
        while not self._stopped.is_set() and self._queue_url == url:
            messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
            for message in messages:
                self._handle(json.loads(message["Body"]))
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            if not messages:
                self._stopped.wait(0.2)

    def _handle(self, event: dict[str, Any]) -> None:
        detail = event["detail"]
        if event.get("detail-type") == DetailType.COMPLETED:
            self.completed.add(str(detail.get("id")))
            return
        self.ticks_seen += 1
        key = (detail.get("id"), detail.get("generation"), detail.get("occurrence"))
        if not str(detail.get("id", "")).startswith(self._prefix) or key in self._seen:
            return
        self._seen.add(key)
        self._republish(detail)
        delay = self._rng.uniform(0.5, 2.5)
        self._timeline.at(
            time.time() + delay, f"redeliver tick {key}", lambda: self._redeliver(event)
        )

    def _republish(self, detail: dict[str, Any]) -> None:
        if self._stack.put_event(DetailType.TICK, TICK_SOURCE, detail):
            self.counts["tick republished (new event id)"] += 1

    def _redeliver(self, event: dict[str, Any]) -> None:
        self._stack.up.wait(timeout=STACK_DOWN_LIMIT)
        body = dict(event)
        body.setdefault("account", ACCOUNT)
        self._stack.client("sqs").send_message(
            QueueUrl=self._stack.queue_url("-TickRule"), MessageBody=json.dumps(body)
        )
        self.counts["tick redelivered (same event id)"] += 1
