"""The AWS-backed ports other than the stores, in memory: executions, the bus, secrets, the
signature ledger; and the targets a unit test must never reach."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tickwork.domain.errors import LaunchRefused
from tickwork.domain.events import DetailType
from tickwork.ports import AlreadyStarted, ExecutionInput, ExecutionState, OutboundEvent, Spent

__all__ = ["FakeExecutions", "FakePublisher", "FakeSecrets", "FakeSignatures", "NoTargets"]


class FakeExecutions:
    def __init__(self, machine: str = "fire") -> None:
        self.machine = machine
        self.refusals: list[str] = []  # codes the next starts are refused with, in turn
        self.started: dict[str, Any] = {}  # name -> its input (a FireOrder or a BatchOrder)
        self.stopped: list[str] = []
        self.ended: dict[str, ExecutionState] = {}  # name → how it ended; else RUNNING
        self.listed = 0  # running_names calls

    def execution_arn(self, name: str) -> str:
        return f"arn:aws:states:us-east-1:123456789012:execution:{self.machine}:{name}"

    def owns(self, execution_arn: str) -> bool:
        return execution_arn.startswith(self.execution_arn(""))

    def start(self, name: str, order: ExecutionInput) -> str:
        if self.refusals:
            raise LaunchRefused(name, self.refusals.pop(0))
        if name in self.started:
            raise AlreadyStarted(name, self.execution_arn(name), self.started[name].to_wire())
        self.started[name] = order
        return self.execution_arn(name)

    def stop(self, execution_arn: str, cause: str) -> None:
        self.stopped.append(execution_arn)
        name = execution_arn.rpartition(":")[2]
        if name in self.started:
            self.ended.setdefault(name, ExecutionState("ABORTED", error=None, cause=cause))

    def end(
        self,
        name: str,
        status: str,
        output: dict[str, Any] | None = None,
        stopped_at: datetime | None = None,
        **error: str,
    ) -> None:
        self.ended[name] = ExecutionState(
            status, output, error.get("error"), error.get("cause"), stopped_at
        )

    def describe(self, name: str) -> ExecutionState | None:
        if name not in self.started:
            return None
        return self.ended.get(name, ExecutionState("RUNNING"))

    def running_names(self, most: int) -> set[str] | None:
        self.listed += 1
        names = {name for name in self.started if name not in self.ended}
        return names if len(names) <= most else None


class FakePublisher:
    def __init__(self) -> None:
        self.events: list[tuple[DetailType, dict[str, Any]]] = []
        self.chunks: list[int] = []  # how many events each call of publish_all carried

    def publish(self, event: OutboundEvent) -> None:
        self.events.append((event.detail_type, event.to_wire()))

    def publish_all(self, events: list[OutboundEvent]) -> None:
        if events:
            self.chunks.append(len(events))
        for event in events:
            self.publish(event)

    def of_type(self, detail_type: DetailType) -> list[dict[str, Any]]:
        return [d for t, d in self.events if t == detail_type]


class NoTargets:
    """Unit tests fulfill no AWS action type: asking for a target's client is a test bug."""

    def client(self, service: str, role_arn: str | None = None) -> Any:
        raise AssertionError(f"a unit test asked for a {service} client: use the emulated stack")


class FakeSecrets:
    def __init__(self, values: dict[str, bytes] | None = None) -> None:
        self.values = dict(values or {})

    def get(self, secret_id: str) -> bytes:
        return self.values[secret_id]


class FakeSignatures:
    """The ledger of used signatures, in memory, with the DynamoDB adapter's answers."""

    def __init__(self) -> None:
        self.spent: dict[str, str | None] = {}
        self.latest: dict[str, int] = {}

    def advance(self, action_id: str, signed_at: int, until: datetime) -> bool:
        if self.latest.get(action_id, signed_at) > signed_at:
            return False
        self.latest[action_id] = signed_at
        return True

    def spend(self, digest: str, event_id: str | None, until: datetime) -> Spent:
        if digest not in self.spent:
            self.spent[digest] = event_id
            return Spent.FIRST
        if event_id and self.spent[digest] == event_id:
            return Spent.AGAIN
        return Spent.REPLAYED
