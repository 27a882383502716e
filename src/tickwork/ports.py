"""The ports: what the use cases need from the outside world, as protocols.

Adapters in ``tickwork.adapters`` implement them over DynamoDB, Step Functions and
EventBridge; tests pass in-memory fakes or the same adapters over moto.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

from tickwork.domain.action import Action, Status
from tickwork.domain.events import DetailType
from tickwork.domain.fire import FireOrder
from tickwork.domain.fire_tally import FireKind
from tickwork.domain.selection import Selection
from tickwork.fulfillment.notifier import Notifier

__all__ = [
    "ActionRepository",
    "Clock",
    "ConcurrencySlots",
    "EventPublisher",
    "ExecutionStarter",
    "ExecutionState",
    "Notifier",
    "SecretSource",
    "SignatureLedger",
    "Spent",
    "TargetClients",
]


class Spent(StrEnum):
    FIRST = "first"  # never used before: act on it
    AGAIN = "again"  # used by this same event (a redelivery): act on it as before
    REPLAYED = "replayed"  # used by another event: refuse it


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

    def in_fire_order(
        self, status: Status | None = None, limit: int = 100, until: datetime | None = None
    ) -> list[Action]:
        """Actions ordered by next fire time, all or of one status; only those due by
        ``until`` when given."""

    def parked_due(self, until: datetime, limit: int = 1000) -> list[str]:
        """Ids of actions whose parked fire is to be launched at or before ``until``, earliest
        first (a sparse, time-bucketed index: never a scan)."""

    def with_manual_fires(self, limit: int = 1000) -> list[Action]:
        """Actions with fires asked for by hand still in flight (a sparse index)."""

    def count(self, selection: Selection) -> dict[str, int]:
        """How many of the selection are in each status (every status named), and how many
        need attention (``NEEDS_ATTENTION``)."""

    def page(
        self, selection: Selection, limit: int, cursor: str | None = None
    ) -> tuple[list[Action], str | None]:
        """One page and an opaque cursor for the next (None at the end)."""

    def delete(self, action_id: str) -> None: ...

    def tally_fire(self, group: str, at: datetime, kind: FireKind) -> None:
        """Count one recorded fire of ``kind`` that happened ``at``, in all and in ``group``,
        by minute and by hour (best effort: statistics, never the record of a fire)."""

    def fire_tallies(
        self, group: str | None, hourly: bool, first: int, last: int
    ) -> dict[int, dict[str, int]]:
        """The fire counts of minutes (or hours) ``first``..``last`` since the epoch, all or of
        a group: {minute: {"onTime": n, "late": n, "failed": n}} for those with any."""


@dataclass(frozen=True)
class ExecutionState:
    """What an execution came to: RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED."""

    status: str
    output: dict[str, Any] | None = None  # SUCCEEDED: the Schedule Tick detail it emitted
    error: str | None = None
    cause: str | None = None

    @property
    def running(self) -> bool:
        return self.status == "RUNNING"


class ExecutionStarter(Protocol):
    def execution_arn(self, name: str) -> str:
        """The ARN an execution of this name has (names are deterministic)."""

    def start(self, name: str, order: FireOrder) -> str:
        """Start the named execution with ``order`` as its input and return its ARN; starting
        one that exists is harmless."""

    def stop(self, execution_arn: str, cause: str) -> None:
        """Stop a running execution; stopping one that has ended is harmless."""

    def describe(self, name: str) -> ExecutionState | None:
        """The execution's state, or None if no execution of this name was started."""


class EventPublisher(Protocol):
    def publish(self, detail_type: DetailType, detail: dict[str, Any]) -> None: ...


class ConcurrencySlots(Protocol):
    """A counting semaphore per key whose slots are leased, so a crashed holder's slot frees."""

    def acquire(
        self, key: str, limit: int, holder: str, now: datetime, lease: timedelta
    ) -> str | None:
        """Take one of ``limit`` slots of ``key`` for ``holder`` (again, if it has one);
        None when all are taken, which counts one wait of ``holder``."""

    def waits(self, holder: str) -> int:
        """How many times ``holder`` found every slot taken (0 if it never waited)."""

    def release(self, slot: str, holder: str) -> None:
        """Give the slot back; harmless if the lease already ended."""


class TargetClients(Protocol):
    """boto3 clients for an action's target: the function's own credentials, or those of the
    action's ``roleArn``, assumed."""

    def client(self, service: str, role_arn: str | None = None) -> Any: ...


class SignatureLedger(Protocol):
    """The signatures of inbound events already acted on: each is accepted once."""

    def spend(self, digest: str, event_id: str | None, until: datetime) -> Spent:
        """Record ``digest`` as used by ``event_id`` until ``until``, and say whether this is
        its first use, the same event delivered again, or a use by another event (a replay)."""
        ...

    def advance(self, action_id: str, signed_at: int, until: datetime) -> bool:
        """Note that a request signed at ``signed_at`` changes ``action_id``. False (and
        nothing noted) if a request signed later has changed it already: this one is stale."""
        ...


class SecretSource(Protocol):
    def get(self, secret_id: str) -> bytes:
        """The secret's current value (cached by the adapter; never logged)."""
