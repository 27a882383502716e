"""The local stack as a child process for the benchmarks, and what they read from it."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chaoskit.stack_process import StackProcess, stack_parameters

__all__ = ["EventTap", "local_stack"]


@contextmanager
def local_stack(state_dir: Path, log_path: Path) -> Iterator[StackProcess]:
    stack = StackProcess(state_dir, log_path, stack_parameters({}))
    stack.start(fresh=True)
    try:
        yield stack
    finally:
        stack.stop()


class EventTap:
    """A queue on the bus for Schedule Tick events (or another of tickwork's), as a worker
    would subscribe; each event is kept once by (id, occurrence)."""

    def __init__(self, stack: StackProcess, detail_type: str = "Schedule Tick") -> None:
        name = f"bench-{uuid.uuid4().hex[:8]}"
        self._sqs = stack.client("sqs")
        self.url = self._sqs.create_queue(QueueName=name)["QueueUrl"]
        arn = self._sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        events = stack.client("events")
        pattern = {"detail-type": [detail_type], "source": ["tickwork"]}
        events.put_rule(Name=name, EventBusName=stack.bus, EventPattern=json.dumps(pattern))
        events.put_targets(Rule=name, EventBusName=stack.bus, Targets=[{"Id": "t", "Arn": arn}])
        self.ticks: dict[tuple[str, int], dict[str, Any]] = {}
        self.repeats = 0

    def drain(self) -> None:
        while True:
            messages = self._sqs.receive_message(
                QueueUrl=self.url, MaxNumberOfMessages=10, WaitTimeSeconds=0
            ).get("Messages", [])
            if not messages:
                return
            for message in messages:
                detail = json.loads(message["Body"])["detail"]
                key = (detail["id"], int(detail.get("occurrence", detail.get("generation", 0))))
                if key in self.ticks:
                    self.repeats += 1
                self.ticks.setdefault(key, detail)
            self._sqs.delete_message_batch(
                QueueUrl=self.url,
                Entries=[
                    {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]}
                    for n, m in enumerate(messages)
                ],
            )

    def wait_for(self, count: int, deadline: float) -> int:
        while len(self.ticks) < count and time.monotonic() < deadline:
            self.drain()
            time.sleep(0.2)
        self.drain()
        return len(self.ticks)
