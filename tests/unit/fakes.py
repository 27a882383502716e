"""In-memory fakes of the ports: they hold state, and tests assert on it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tickwork.config import Settings
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action, Status
from tickwork.domain.errors import ActionConflict
from tickwork.fulfillment.defaults import default_registry
from tickwork.ports import ExecutionState


@dataclass
class FakeClock:
    current: datetime
    slept: list[float] = field(default_factory=list)

    def now(self) -> datetime:
        return self.current

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.current += timedelta(seconds=seconds)

    def advance(self, **delta: float) -> None:
        self.current += timedelta(**delta)


class FakeRepository:
    def __init__(self) -> None:
        self.items: dict[str, Action] = {}
        self.writes = 0

    def get(self, action_id: str) -> Action | None:
        return copy.deepcopy(self.items.get(action_id))

    def create(self, action: Action) -> None:
        if action.id in self.items:
            raise ActionConflict(action.id, "exists")
        self.items[action.id] = action
        self.writes += 1

    def list(self, status: str | None = None, limit: int = 100) -> list[Action]:
        chosen = [a for a in self.items.values() if status is None or a.status == status]
        return sorted(chosen, key=lambda a: (a.execution_time is None, a.execution_time, a.id))[
            :limit
        ]

    def count_by_status(self) -> dict[str, int]:
        return {s: sum(a.status == s for a in self.items.values()) for s in Status}

    def save(self, action: Action, expected_version: int) -> None:
        current = self.items.get(action.id)
        if current is None or current.version != expected_version:
            raise ActionConflict(action.id, "version moved")
        self.items[action.id] = action
        self.writes += 1


class FakeExecutions:
    def __init__(self) -> None:
        self.started: dict[str, dict[str, Any]] = {}
        self.stopped: list[str] = []
        self.ended: dict[str, ExecutionState] = {}  # name → how it ended; else RUNNING

    def execution_arn(self, name: str) -> str:
        return f"arn:aws:states:us-east-1:123456789012:execution:fire:{name}"

    def start(self, name: str, payload: dict[str, Any]) -> str:
        self.started.setdefault(name, payload)
        return self.execution_arn(name)

    def stop(self, execution_arn: str, cause: str) -> None:
        self.stopped.append(execution_arn)
        name = execution_arn.rpartition(":")[2]
        if name in self.started:
            self.ended.setdefault(name, ExecutionState("ABORTED", error=None, cause=cause))

    def end(self, name: str, status: str, output: dict[str, Any] | None = None, **error: str):
        self.ended[name] = ExecutionState(status, output, error.get("error"), error.get("cause"))

    def exists(self, name: str) -> bool:
        return name in self.started

    def is_running(self, name: str) -> bool:
        state = self.describe(name)
        return state is not None and state.running

    def describe(self, name: str) -> ExecutionState | None:
        if name not in self.started:
            return None
        return self.ended.get(name, ExecutionState("RUNNING"))


class FakePublisher:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def publish(self, detail_type: str, detail: dict[str, Any]) -> None:
        self.events.append((detail_type, detail))

    def of_type(self, detail_type: str) -> list[dict[str, Any]]:
        return [d for t, d in self.events if t == detail_type]


def fake_dependencies(now: datetime, **settings: Any) -> Dependencies:
    return Dependencies(
        settings=Settings(
            table_name="t", event_bus_name="b", state_machine_arn="arn:sm", **settings
        ),
        repository=FakeRepository(),
        executions=FakeExecutions(),
        publisher=FakePublisher(),
        registry=default_registry(),
        clock=FakeClock(now),
    )
