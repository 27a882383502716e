"""A batch: the parked fires due in the same second, run by one execution of
statemachines/batch.asl.json.

- ``BatchOrder`` — the execution's input: the second, and each fire's key and fire time (never
  its data: the task reads the records), so a batch of ``BatchMaxFires`` stays far under the
  256 KiB payload limit;
- ``batch_name`` — deterministic per (second, members, repair): a relaunch of the same batch is
  harmless, and a batch of other members never takes the name of one already started;
  ``chain_name`` — the batch a batch's recurring fires go on to, per (that batch, second);
- ``BatchFire`` — what became of one fire in the batch task, as its output lists it:
  ``FIRED`` (its attempts and lateness; ``NO_ACTION`` when it ran nothing), ``FAILED`` (the
  proved failure report's error), ``HANDED_OFF`` to its own execution (named: retried alone
  with the stack's backoff), ``PARKED`` again (its own execution was refused: the pump retries
  it), or ``QUIET`` (superseded, paused, cancelled or skipped: why).

Pure: names, shapes and their wire forms.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from tickwork.domain.errors import MalformedFire, ValidationFailed
from tickwork.domain.fire import FireFailure, FireKey, Tick
from tickwork.domain.times import iso, parse_iso

__all__ = [
    "BATCH_PREFIX",
    "BatchFire",
    "BatchOrder",
    "BatchOutcome",
    "BatchedFire",
    "batch_name",
    "chain_name",
    "is_batch_name",
]

BATCH_PREFIX = "b-"  # no action's execution name starts so: ids start with a letter or digit


@dataclass(frozen=True)
class BatchedFire:
    action_id: str
    generation: int
    occurrence: int
    fire_at: datetime

    @property
    def key(self) -> FireKey:
        return (self.action_id, self.generation, self.occurrence, 0)

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.action_id,
            "generation": self.generation,
            "occurrence": self.occurrence,
            "fireAt": iso(self.fire_at),
        }


@dataclass(frozen=True)
class BatchOrder:
    second: datetime  # the Wait ends at it; each fire then runs at its own millisecond
    fires: tuple[BatchedFire, ...]
    repair: int = 0  # from 1 on: a reconciler's repair of a batch that ended without them

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "waitUntil": iso(self.second),
            "fires": [fire.to_wire() for fire in self.fires],
        }
        if self.repair:
            wire["repair"] = self.repair
        return wire

    @classmethod
    def from_wire(cls, wire: Any) -> BatchOrder:
        if not isinstance(wire, dict) or not isinstance(wire.get("fires"), list):
            raise MalformedFire.of("batch", "is not a batch order", "send waitUntil and fires")
        try:
            fires = tuple(
                BatchedFire(
                    str(f["id"]),
                    int(f["generation"]),
                    int(f["occurrence"]),
                    parse_iso(str(f["fireAt"]), "fireAt"),
                )
                for f in wire["fires"]
            )
            second = parse_iso(str(wire["waitUntil"]), "waitUntil")
        except (KeyError, TypeError, ValueError, ValidationFailed) as error:
            raise MalformedFire.of(
                "batch.fires",
                f"a fire is not id, generation, occurrence, fireAt: {error}",
                "send each fire's key and fire time, as the pump writes them",
            ) from error
        return cls(second, fires, int(wire.get("repair", 0)))


def batch_name(second: datetime, fires: tuple[BatchedFire, ...], repair: int = 0) -> str:
    """``b-<epoch second>-<12 hex of its members' keys>[-r<repair>]``: valid for Step Functions,
    the same for the same members, another for any other."""
    members = "\n".join(f"{f.action_id}\x1f{f.generation}\x1f{f.occurrence}" for f in fires)
    digest = hashlib.sha256(members.encode()).hexdigest()[:12]
    name = f"{BATCH_PREFIX}{int(second.timestamp())}-{digest}"
    return f"{name}-r{repair}" if repair else name


def chain_name(parent: str, second: datetime) -> str:
    """The batch a batch's recurring fires go on to at ``second``: named for that batch and the
    second (not for its members, which are known only as they are recorded), so a retried task
    names the same one."""
    epoch = int(second.timestamp())
    digest = hashlib.sha256(f"{parent}\n{epoch}".encode()).hexdigest()[:12]
    return f"{BATCH_PREFIX}{epoch}-{digest}"


def is_batch_name(execution_name: str | None) -> bool:
    return bool(execution_name) and str(execution_name).startswith(BATCH_PREFIX)


class BatchOutcome(StrEnum):
    FIRED = "FIRED"
    NO_ACTION = "NO_ACTION"
    FAILED = "FAILED"
    HANDED_OFF = "HANDED_OFF"
    PARKED = "PARKED"
    QUIET = "QUIET"


@dataclass(frozen=True)
class BatchFire:
    fire: BatchedFire
    outcome: BatchOutcome
    tick: Tick | None = None  # FIRED
    failure: FireFailure | None = None  # FAILED
    execution_name: str | None = None  # HANDED_OFF: its own execution
    reason: str | None = None  # QUIET, PARKED, HANDED_OFF: why
    recorded: bool = False  # FIRED, NO_ACTION, FAILED: this run recorded it (not a repeat)

    def to_wire(self) -> dict[str, Any]:
        """Its line in the batch's output: the fire, its outcome, and what goes with it — the
        tick's attempts and lateness, the failure's error, the execution it was handed to, or
        why it ended quietly (never the tick itself: the output stays small)."""
        wire: dict[str, Any] = {**self.fire.to_wire(), "outcome": str(self.outcome)}
        if self.tick is not None:
            wire.update(attempts=self.tick.attempts, lateMs=self.tick.late_ms)
        if self.failure is not None:
            wire["error"] = self.failure.error
        if self.execution_name is not None:
            wire["executionName"] = self.execution_name
        if self.reason is not None:
            wire["reason"] = self.reason
        return wire
