"""The ports: what the use cases need from the outside world, as protocols.

Adapters in ``tickwork.adapters`` implement them over DynamoDB, Step Functions and
EventBridge; tests pass in-memory fakes or the same adapters over moto.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from tickwork.domain.action import Action

__all__ = ["ActionRepository", "Clock", "EventPublisher", "ExecutionStarter"]


class Clock(Protocol):
    def now(self) -> datetime: ...

    def sleep(self, seconds: float) -> None: ...


class ActionRepository(Protocol):
    def get(self, action_id: str) -> Action | None: ...

    def create(self, action: Action) -> None:
        """Write a new record; raises ``ActionConflict`` if the id exists."""

    def save(self, action: Action, expected_version: int) -> None:
        """Replace the record if its version is still ``expected_version``,
        else raise ``ActionConflict``."""

    def list(self, status: str | None = None, limit: int = 100) -> list[Action]:
        """Actions ordered by next fire time, all or of one status."""

    def count_by_status(self) -> dict[str, int]: ...

    def page(
        self, status: str | None, limit: int, cursor: str | None = None
    ) -> tuple[list[Action], str | None]:
        """One page and an opaque cursor for the next (None at the end)."""

    def delete(self, action_id: str) -> None: ...


class ExecutionStarter(Protocol):
    def execution_arn(self, name: str) -> str:
        """The ARN an execution of this name has (names are deterministic)."""

    def start(self, name: str, payload: dict[str, Any]) -> str:
        """Start the named execution and return its ARN; starting one that exists is harmless."""

    def stop(self, execution_arn: str, cause: str) -> None:
        """Stop a running execution; stopping one that has ended is harmless."""

    def exists(self, name: str) -> bool:
        """Whether an execution of this name was ever started (running or ended)."""

    def is_running(self, name: str) -> bool: ...


class EventPublisher(Protocol):
    def publish(self, detail_type: str, detail: dict[str, Any]) -> None: ...
