"""A batch: fires due together, run by one execution of statemachines/batch.asl.json.
Words as docs/protocol.md's glossary defines them.

- ``window_of`` — the batch window a fire falls in (``BatchWindowSeconds`` from the epoch on):
  the fires of one window may share an execution, which waits to its earliest member's second
  (``wait_second``) and then runs each member at its own millisecond;
- ``BatchOrder`` — the execution's input: the second its Wait ends at and its *members* (each
  fire's key and fire time, never its data: the task reads the records), so a batch of
  ``BatchMaxFires`` stays far under the 256 KiB payload limit; proved by the stack that starts it;
- ``batch_name`` — deterministic per (second, members, repair): a relaunch of the same batch is
  harmless, and a batch of other members never takes the name of one already started;
  ``follow_on_name`` — the batch a batch starts for its members' next fires, per (that batch,
  second). Names are for people: a batch is known by its machine (``domain.execution``);
- ``MemberResult`` — what became of one member in the batch task, as its output lists it
  (``MemberOutcome``): ``FIRED`` (its attempts and lateness; ``NO_ACTION`` when it ran
  nothing), ``FAILED`` (the proved failure report's error), ``HANDED_OVER`` to its own lone
  execution (named: retried alone with the stack's backoff), ``PARKED`` again (its own
  execution was refused: the pump retries it), or ``QUIET`` (superseded, paused, cancelled or
  skipped: why).

Pure: names, shapes and their wire forms.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from tickwork.domain.errors import MalformedFire
from tickwork.domain.fire import FireFailure, FireKey, Tick
from tickwork.domain.naming import name_digest
from tickwork.domain.times import from_epoch_ms, iso, to_epoch_ms

__all__ = [
    "BatchOrder",
    "Member",
    "MemberOutcome",
    "MemberResult",
    "batch_name",
    "follow_on_name",
    "wait_second",
    "window_of",
]

_NAME_PREFIX = "b-"  # for people reading a list of executions; never read back


@dataclass(frozen=True)
class Member:
    """One fire a batch order lists."""

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
    second: datetime  # the Wait ends at it (its earliest member's); each member then runs at
    # its own millisecond
    members: tuple[Member, ...]
    repair: int = 0  # from 1 on: a reconciler's repair of a batch that ended without them
    proof: str = ""  # made by the code that starts the execution: integrity.order_proof

    def listed_twice(self) -> list[str]:
        """The action ids the order lists more than once (the stack never issues such an order:
        one record holds one fire at a time)."""
        counts = Counter(member.action_id for member in self.members)
        return sorted(action_id for action_id, n in counts.items() if n > 1)

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "waitUntil": iso(self.second),
            "fires": [member.to_wire() for member in self.members],
        }
        if self.repair:
            wire["repair"] = self.repair
        if self.proof:
            wire["proof"] = self.proof
        return wire

    @classmethod
    def from_wire(cls, wire: Any) -> BatchOrder:
        from tickwork.domain.batch_wire import BatchWire, read  # built at the first read

        order = read(
            BatchWire,
            wire,
            "batch",
            MalformedFire,
            not_object=("is not a batch order", "send waitUntil and fires"),
        )
        members = tuple(
            Member(m.action_id, m.generation, m.occurrence, m.fire_at) for m in order.fires
        )
        return cls(order.wait_until, members, order.repair, order.proof or "")


def window_of(at: datetime, window: timedelta) -> datetime:
    """The start of the batch window ``at`` falls in: windows of ``window`` (whole seconds)
    from the epoch on. The fires of one window may share an execution."""
    step = max(1000, int(window.total_seconds()) * 1000)
    ms = to_epoch_ms(at)
    return from_epoch_ms(ms - ms % step)


def wait_second(members: tuple[Member, ...]) -> datetime:
    """Where a batch's Wait ends: the second of its earliest member."""
    return min(member.fire_at for member in members).replace(microsecond=0)


def batch_name(
    second: datetime,
    members: tuple[Member, ...],
    repair: int = 0,
    *,
    key: bytes | None,
    lives: tuple[str, ...] = (),
) -> str:
    """``b-<epoch second>-<16 hex>[-r<repair>]``: valid for Step Functions, the same for the
    same members and repair, another for any other; the digest is keyed (``name_digest``), so
    no one without the key can tell a batch's name, or its repair's, in advance. ``lives``:
    when each member's record was created, one per member — an id purged and created again
    starts at generation 1 again, and its batch must not take a name its earlier life's did."""
    keys = "\n".join(
        f"{m.action_id}\x1f{m.generation}\x1f{m.occurrence}" + (f"\x1f{life}" if life else "")
        for m, life in zip(members, lives or ("",) * len(members), strict=True)
    )
    epoch = int(second.timestamp())
    name = f"{_NAME_PREFIX}{epoch}-{name_digest(key, 'batch', epoch, repair, keys)}"
    return f"{name}-r{repair}" if repair else name


def follow_on_name(parent: str, second: datetime, *, key: bytes | None) -> str:
    """The follow-on batch a batch starts at ``second`` for its members' next fires: named for
    that batch and the second (not for its members, which are known only as they are recorded),
    so a retried task names the same one; keyed like every name."""
    epoch = int(second.timestamp())
    return f"{_NAME_PREFIX}{epoch}-{name_digest(key, 'follow-on', parent, epoch)}"


class MemberOutcome(StrEnum):
    FIRED = "FIRED"
    NO_ACTION = "NO_ACTION"
    FAILED = "FAILED"
    HANDED_OVER = "HANDED_OFF"  # the wire keeps the name the contract has always had
    PARKED = "PARKED"
    QUIET = "QUIET"


@dataclass(frozen=True)
class MemberResult:
    member: Member
    outcome: MemberOutcome
    tick: Tick | None = None  # FIRED
    failure: FireFailure | None = None  # FAILED
    handed_to: str | None = None  # HANDED_OVER: the name of its own lone execution
    reason: str | None = None  # QUIET, PARKED, HANDED_OVER: why
    recorded: bool = False  # FIRED, NO_ACTION, FAILED: this run recorded it (not a repeat)

    def to_wire(self) -> dict[str, Any]:
        """Its line in the batch's output: the fire, its outcome, and what goes with it — the
        tick's attempts and lateness, the failure's error, the execution it was handed over to,
        or why it ended quietly (never the tick itself: the output stays small)."""
        wire: dict[str, Any] = {**self.member.to_wire(), "outcome": str(self.outcome)}
        if self.tick is not None:
            wire.update(attempts=self.tick.attempts, lateMs=self.tick.late_ms)
        if self.failure is not None:
            wire["error"] = self.failure.error
        if self.handed_to is not None:
            wire["executionName"] = self.handed_to
        if self.reason is not None:
            wire["reason"] = self.reason
        return wire
