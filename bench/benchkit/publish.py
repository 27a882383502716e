"""Publishing many Schedule Starts to a local stack's bus, as fast as it accepts them."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tickwork.domain.events import DetailType
from tickwork_local.process import LocalProcess

__all__ = ["publish_starts"]

BATCH = 10  # PutEvents takes at most 10 entries
SOURCE = "bench.tickwork"


def publish_starts(
    stack: LocalProcess,
    details: list[dict[str, Any]],
    publishers: int = 4,
    progress: Callable[[str], None] | None = None,
) -> float:
    """Publish every detail (PutEvents batches of 10, ``publishers`` at once); the seconds it
    took until the bus had accepted them all. Raises if the bus refused any."""
    events = stack.client("events")
    batches = [details[i : i + BATCH] for i in range(0, len(details), BATCH)]
    refused: list[Any] = []
    done = [0]

    def send(batch: list[dict[str, Any]]) -> None:
        answer = events.put_events(
            Entries=[
                {
                    "EventBusName": stack.bus,
                    "Source": SOURCE,
                    "DetailType": DetailType.START,
                    "Detail": json.dumps(detail),
                }
                for detail in batch
            ]
        )
        if answer.get("FailedEntryCount"):
            refused.extend(e for e in answer["Entries"] if "ErrorCode" in e)
        done[0] += len(batch)
        if progress and done[0] % 1000 < BATCH:
            progress(f"  {done[0]}/{len(details)} Starts accepted")

    began = time.perf_counter()
    with ThreadPoolExecutor(publishers) as pool:
        list(pool.map(send, batches))
    elapsed = time.perf_counter() - began
    if refused:
        raise RuntimeError(f"the bus refused {len(refused)} Starts, e.g. {refused[0]}")
    return elapsed
