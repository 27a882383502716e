"""Creating the planned actions: Starts on the bus (in PutEvents batches) or POST /actions.

``dup-start`` actions are published twice (the copy in the same batch or the next one); the
EventId of the first copy is kept so that exact event can be delivered again later.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from chaoskit.plan import Kind, Plan, PlannedAction
from tickwork.domain.events import DetailType
from tickwork_local.process import LocalProcess

__all__ = ["START_SOURCE", "Created", "create_actions", "list_actions", "wait_created"]

START_SOURCE = "chaos.bench"
_BATCH = 10  # PutEvents takes at most 10 entries


@dataclass
class Created:
    event_ids: dict[str, str] = field(default_factory=dict)  # id -> EventId of its first Start
    refused: dict[str, str] = field(default_factory=dict)  # id -> why its creation failed
    published: int = 0


class _Publisher:
    def __init__(self, stack: LocalProcess, created: Created) -> None:
        self._events = stack.client("events")
        self._bus = stack.bus
        self._created = created
        self._batch: list[tuple[str, dict[str, Any]]] = []
        self._later: list[tuple[str, dict[str, Any]]] = []

    def add(self, action: PlannedAction, detail: dict[str, Any]) -> None:
        copies = 2 if action.kind is Kind.DUP_START else 1
        together = copies == 2 and action.duplicate_in_batch
        if len(self._batch) + (2 if together else 1) > _BATCH:
            self.flush()
        self._batch.append((action.id, detail))
        if together:
            self._batch.append((action.id, detail))
        elif copies == 2:
            self._later.append((action.id, detail))

    def flush(self) -> None:
        while self._batch:
            self._send(self._batch)
            self._batch, self._later = self._later[:_BATCH], self._later[_BATCH:]

    def _send(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        entries = [
            {
                "EventBusName": self._bus,
                "Source": START_SOURCE,
                "DetailType": DetailType.START,
                "Detail": json.dumps(detail),
            }
            for _, detail in batch
        ]
        answer = self._events.put_events(Entries=entries)
        for (action_id, _), entry in zip(batch, answer["Entries"], strict=True):
            if "EventId" in entry:
                self._created.event_ids.setdefault(action_id, entry["EventId"])
                self._created.published += 1
            else:
                self._created.refused[action_id] = f"bus refused: {entry}"


def create_actions(stack: LocalProcess, plan: Plan, url: str) -> Created:
    created = Created()
    publisher = _Publisher(stack, created)
    for action in plan.actions:
        detail = action.start_detail(url)
        if action.via_bus:
            publisher.add(action, detail)
            continue
        answer = stack.api.post(f"{stack.api_url}/actions", json=detail, timeout=60)
        if answer.status_code != 201:
            created.refused[action.id] = f"POST /actions answered {answer.status_code}"
    publisher.flush()
    return created


def list_actions(stack: LocalProcess, status: str | None = None) -> dict[str, dict[str, Any]]:
    """Every action's summary (status, occurrence, executionTime), id -> summary."""
    found: dict[str, dict[str, Any]] = {}
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 200}
        params.update({"cursor": cursor} if cursor else {})
        params.update({"status": status} if status else {})
        page = stack.api.get(f"{stack.api_url}/actions", params=params, timeout=60)
        page.raise_for_status()
        body = page.json()
        found.update({item["id"]: item for item in body["items"]})
        cursor = body.get("nextCursor")
        if not cursor:
            return found


def wait_created(stack: LocalProcess, ids: set[str], timeout: float) -> dict[str, dict[str, Any]]:
    """Poll the listing until every id is there (Starts on the bus land asynchronously)."""
    deadline = time.monotonic() + timeout
    while True:
        found = list_actions(stack)
        if ids <= found.keys() or time.monotonic() > deadline:
            return found
        time.sleep(1.0)
