"""What a use case answers, typed: the handlers branch on ``outcome`` (a ``Done``) and name
metrics after it, the API and the CLI turn ``to_wire`` into JSON (fields that do not apply are
left out).

- ``ChangeAnswer`` — a cancel, pause, resume, run now or retry, or a change deferred to after
  the imminent fire;
- ``RecordAnswer`` — a tick or failure report recorded (or ignored: stale, or repeated);
- ``Rejection`` — an inbound event, tick or report refused: the ``Schedule Rejected`` it sent;
- ``BackfillAnswer`` — a backfill asked for, or gone on with;
- ``StartResult`` (steering/start.py) — a Start created, replaced, unchanged or deferred.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from tickwork.domain.announcements import Rejected
from tickwork.domain.backfill import BackfillRequest
from tickwork.domain.fire import Trigger
from tickwork.domain.steering import ChangeKind, FailurePolicy, ManualFire
from tickwork.domain.times import iso

__all__ = [
    "AppliesAfter",
    "BackfillAnswer",
    "BulkAnswer",
    "BulkItem",
    "ChangeAnswer",
    "Done",
    "RecordAnswer",
    "Rejection",
]


class Done(StrEnum):
    CREATED = "created"
    REPLACED = "replaced"
    UNCHANGED = "unchanged"
    DEFERRED = "deferred"  # inside the lock: it applies after the imminent fire
    CANCELLED = "cancelled"
    PAUSED = "paused"
    RESUMED = "resumed"
    COMPLETED = "completed"  # resumed past its last fire
    TRIGGERED = "triggered"
    RETRIED = "retried"
    RECORDED = "recorded"
    IGNORED = "ignored"
    REJECTED = "rejected"
    REFUSED = "refused"  # one action of a bulk change, refused (its error says why)
    SKIPPED = "skipped"  # one occurrence skipped by request
    MOVED = "moved"  # one occurrence moved by request
    RESTORED = "restored"  # a skip or move of one occurrence undone
    BACKFILLING = "backfilling"  # a backfill running, some of its occurrences still waiting
    BACKFILLED = "backfilled"  # every occurrence of a backfill run or running


@dataclass(frozen=True)
class AppliesAfter:
    """The imminent fire a deferred change waits for."""

    occurrence: int
    fire_time: datetime


@dataclass(frozen=True)
class ChangeAnswer:
    action_id: str
    outcome: Done
    status: str
    execution_time: datetime | None = None
    note: str | None = None
    occurrence: int | None = None
    manual: int | None = None
    trigger: Trigger | None = None
    idempotency_key: str | None = None
    execution_arn: str | None = None
    change: ChangeKind | None = None  # deferred: which change waits
    applies_after: AppliesAfter | None = None
    message: str | None = None
    scheduled_time: datetime | None = None  # a skip or move: the occurrence's scheduled time
    fires_at: datetime | None = None  # a skip or move: when that occurrence now fires (None:
    # skipped)

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "id": self.action_id,
            "outcome": str(self.outcome),
            "status": self.status,
            "executionTime": iso(self.execution_time) if self.execution_time else None,
            "note": self.note,
            "occurrence": self.occurrence,
            "manual": self.manual,
            "trigger": str(self.trigger) if self.trigger else None,
            "idempotencyKey": self.idempotency_key,
            "executionArn": self.execution_arn,
            "change": str(self.change) if self.change else None,
            "appliesAfter": _applies_after(self.applies_after),
            "message": self.message,
            "scheduledTime": iso(self.scheduled_time) if self.scheduled_time else None,
            "firesAt": iso(self.fires_at) if self.fires_at else None,
        }
        return _present(wire)


@dataclass(frozen=True)
class RecordAnswer:
    action_id: str
    outcome: Done  # RECORDED, or IGNORED (a stale or repeated delivery)
    status: str | None = None
    execution_time: datetime | None = None  # the next fire, when there is one
    reason: str | None = None  # why it was ignored
    error: str | None = None  # a failure: what failed
    failure_policy: FailurePolicy | None = None
    manual: int | None = None
    trigger: Trigger | None = None
    late_ms: int | None = None  # a tick recorded: how late it fired

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "id": self.action_id,
            "outcome": str(self.outcome),
            "status": self.status,
            "executionTime": iso(self.execution_time) if self.execution_time else None,
            "lateMs": self.late_ms,
            "reason": self.reason,
            "error": self.error,
            "failurePolicy": str(self.failure_policy) if self.failure_policy else None,
            "manual": self.manual,
            "trigger": str(self.trigger) if self.trigger else None,
        }
        return _present(wire)


@dataclass(frozen=True)
class Rejection:
    """A refused request: nothing was written, and ``rejected`` went on the bus."""

    rejected: Rejected
    outcome: Done = Done.REJECTED

    def to_wire(self) -> dict[str, Any]:
        return {"outcome": str(self.outcome), **self.rejected.to_wire()}


@dataclass(frozen=True)
class BulkItem:
    action_id: str
    outcome: Done
    status: str | None = None
    error: str | None = None  # REFUSED: why

    def to_wire(self) -> dict[str, Any]:
        return _present(
            {
                "id": self.action_id,
                "outcome": str(self.outcome),
                "status": self.status,
                "error": self.error,
            }
        )


@dataclass(frozen=True)
class BulkAnswer:
    """One page of a bulk change: each action's answer, and where the next page starts."""

    results: list[BulkItem]
    next_cursor: str | None

    def to_wire(self) -> dict[str, Any]:
        return {
            "matched": len(self.results),
            "results": [item.to_wire() for item in self.results],
            "nextCursor": self.next_cursor,
        }


@dataclass(frozen=True)
class BackfillAnswer:
    action_id: str
    outcome: Done  # BACKFILLING (some wait), BACKFILLED (all run or running), UNCHANGED
    status: str
    total: int = 0  # occurrences in the range
    launched: tuple[ManualFire, ...] = ()
    already: int = 0  # backfilled before: not run again
    overlapping: tuple[datetime, ...] = ()  # the live schedule's: skipped (overlap SKIP)
    remaining: int = 0  # waiting for a free slot
    in_flight: int = 0  # backfilled fires running now
    request: BackfillRequest | None = field(default=None, compare=False)

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "id": self.action_id,
            "outcome": str(self.outcome),
            "status": self.status,
            "occurrences": self.total,
            "launched": [
                {
                    "scheduledTime": iso(f.scheduled) if f.scheduled else None,
                    "manual": f.number,
                    "idempotencyKey": f.idempotency_key,
                }
                for f in self.launched
            ],
            "alreadyBackfilled": self.already,
            "overlapping": len(self.overlapping),
            "remaining": self.remaining,
            "inFlight": self.in_flight,
        }
        if self.overlapping:
            wire["firstOverlapping"] = iso(self.overlapping[0])
        return wire


def _present(wire: dict[str, Any]) -> dict[str, Any]:
    """The fields that apply: those that are not None."""
    return {key: value for key, value in wire.items() if value is not None}


def _applies_after(after: AppliesAfter | None) -> dict[str, Any] | None:
    if after is None:
        return None
    return {"occurrence": after.occurrence, "fireTime": iso(after.fire_time)}
