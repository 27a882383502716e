"""The lifecycle events tickwork puts on its bus, one type each, written in one place.

Each is made where its change is decided and published through ``EventPublisher.publish``
as it is; its ``detail_type`` names the event and ``to_wire`` is its detail (docs/contracts.md,
"Events on the bus"). Ticks and failure reports are ``domain.fire``'s ``Tick`` and
``FireFailure``, published the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from tickwork.domain.action import Action
from tickwork.domain.events import DetailType
from tickwork.domain.times import iso

__all__ = [
    "Announcement",
    "Completed",
    "Late",
    "Missed",
    "Paused",
    "Reconciled",
    "Rejected",
    "Resumed",
    "Skipped",
    "Started",
    "Stopped",
    "Tampered",
]


@dataclass(frozen=True)
class Started:
    """An action was created or replaced."""

    detail_type: ClassVar[DetailType] = DetailType.STARTED
    action: Action

    def to_wire(self) -> dict[str, Any]:
        action = self.action
        return {
            "id": action.id,
            "generation": action.generation,
            "status": str(action.status),
            "executionTime": iso(action.execution_time) if action.execution_time else None,
            "schedule": action.schedule.describe(),
            "action": action.action,
            "group": action.group,
        }


@dataclass(frozen=True)
class Completed:
    """An action's last fire was recorded (or a paused one-off resumed after its time)."""

    detail_type: ClassVar[DetailType] = DetailType.COMPLETED
    action_id: str
    generation: int
    occurrences: int

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.action_id,
            "generation": self.generation,
            "occurrences": self.occurrences,
        }


@dataclass(frozen=True)
class Stopped:
    """An action was cancelled (``generation``: the one that stopped)."""

    detail_type: ClassVar[DetailType] = DetailType.STOPPED
    action_id: str
    generation: int

    def to_wire(self) -> dict[str, Any]:
        return {"id": self.action_id, "generation": self.generation}


@dataclass(frozen=True)
class Paused:
    """Paused by its user, by its failure policy, or held on its calendar (``held_by``: it
    allows none of its fires within the search bound)."""

    detail_type: ClassVar[DetailType] = DetailType.PAUSED
    action_id: str
    generation: int
    note: str | None
    held_by: str | None = None

    @classmethod
    def of(cls, action: Action) -> Paused:
        note = action.pause.note if action.pause else None
        return cls(action.id, action.generation, note, action.held_by_calendar)

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"id": self.action_id, "generation": self.generation}
        wire["note"] = self.note
        if self.held_by is not None:
            wire["heldByCalendar"] = self.held_by
        return wire


@dataclass(frozen=True)
class Resumed:
    detail_type: ClassVar[DetailType] = DetailType.RESUMED
    action_id: str
    generation: int
    execution_time: datetime

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.action_id,
            "generation": self.generation,
            "executionTime": iso(self.execution_time),
        }


@dataclass(frozen=True)
class Late:
    """A fire ran later than its action's misfireThreshold after its time (an outage, a
    backlog, a paused pump): it ran, late, as its catch-up policy said."""

    detail_type: ClassVar[DetailType] = DetailType.LATE
    action_id: str
    generation: int
    occurrence: int
    scheduled_time: datetime
    actual_time: datetime
    late_ms: int
    threshold_ms: int

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.action_id,
            "generation": self.generation,
            "occurrence": self.occurrence,
            "scheduledTime": iso(self.scheduled_time),
            "actualTime": iso(self.actual_time),
            "lateMs": self.late_ms,
            "thresholdMs": self.threshold_ms,
        }


@dataclass(frozen=True)
class Missed:
    """A fire expected by its time plus the grace has not happened (a lost execution, a pump
    stopped or far behind, an outage): the watchdog's word, once per fire."""

    detail_type: ClassVar[DetailType] = DetailType.MISSED
    action_id: str
    group: str
    generation: int
    occurrence: int
    scheduled_time: datetime
    overdue_ms: int
    cause: str

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.action_id,
            "group": self.group,
            "generation": self.generation,
            "occurrence": self.occurrence,
            "scheduledTime": iso(self.scheduled_time),
            "overdueMs": self.overdue_ms,
            "cause": self.cause,
        }


@dataclass(frozen=True)
class Skipped:
    """An occurrence was not run: missed (the catch-up policy) or skipped by request."""

    detail_type: ClassVar[DetailType] = DetailType.SKIPPED
    action_id: str
    generation: int
    occurrence: int
    scheduled_time: datetime
    late_ms: int
    catch_up: str
    reason: str = "missed"  # "missed; catch-up SKIP", or "skipped by request[: note]"

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.action_id,
            "generation": self.generation,
            "occurrence": self.occurrence,
            "scheduledTime": iso(self.scheduled_time),
            "lateMs": self.late_ms,
            "catchUp": self.catch_up,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Tampered:
    """Nothing ran: a record's seal did not match, or an execution's order was not one the stack
    issued for it (``reason`` says which; ``execution``, the execution's ARN, for an order)."""

    detail_type: ClassVar[DetailType] = DetailType.TAMPERED
    action_id: str
    generation: int
    occurrence: int
    reason: str = "the record's seal does not match"
    execution: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "id": self.action_id,
            "generation": self.generation,
            "occurrence": self.occurrence,
            "reason": self.reason,
        }
        if self.execution is not None:
            wire["executionArn"] = self.execution
        return wire


@dataclass(frozen=True)
class Rejected:
    """An inbound event, a tick or report, or a change that waited, was refused; nothing was
    written. ``request`` is what was refused (its detail-type, or "deferred update"); ``source``
    the event's sender, when it came on the bus.

    Bounded whatever was sent: each text is cut (and says so), and the problems after the first
    ``MOST_PROBLEMS`` are left out (and one more line says how many) — a few KB at most, so the
    event always fits the bus's 256 KB and a page of kept ones a function's answer."""

    detail_type: ClassVar[DetailType] = DetailType.REJECTED
    action_id: str | None
    request: str
    reason: str  # the error's name
    message: str
    problems: list[dict[str, str]] = field(default_factory=list)
    event_id: str | None = None
    signature: str | None = None  # why a signature was refused
    source: str | None = None  # the sender's EventBridge source

    def __post_init__(self) -> None:
        cut = object.__setattr__
        cut(self, "action_id", _cut(self.action_id, 200))
        cut(self, "request", _cut(self.request, 64) or "")
        cut(self, "reason", _cut(self.reason, 64) or "")
        cut(self, "message", _cut(self.message, 800) or "")
        cut(self, "event_id", _cut(self.event_id, 100))
        cut(self, "signature", _cut(self.signature, 64))
        cut(self, "source", _cut(self.source, 256))
        problems = [
            {key: _cut(str(value), _PROBLEM_PART.get(key, 100)) or "" for key, value in p.items()}
            for p in self.problems[:MOST_PROBLEMS]
        ]
        if len(self.problems) > MOST_PROBLEMS:
            left = len(self.problems) - MOST_PROBLEMS
            more = f"{left} more problems left out"
            problems.append({"field": "...", "problem": more, "fix": ""})
        cut(self, "problems", problems)

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "id": self.action_id,
            "request": self.request,
            "eventId": self.event_id,
            "reason": self.reason,
            "message": self.message,
            "problems": self.problems,
        }
        if self.signature is not None:
            wire["signature"] = self.signature
        if self.source is not None:
            wire["source"] = self.source
        return wire


MOST_PROBLEMS = 8  # problems a rejection names in full
_PROBLEM_PART = {"field": 100, "problem": 160, "fix": 160}  # characters of each, at most
_CUT = "… [cut]"


def _cut(text: str | None, most: int) -> str | None:
    """``text`` as it is, or cut to ``most`` characters, ending in a mark that says so."""
    if text is None or len(text) <= most:
        return text
    return text[: most - len(_CUT)] + _CUT


@dataclass(frozen=True)
class Reconciled:
    """The reconciler repaired actions: the ids of each kind of repair; and ``settled``, the
    batches whose tabs it settled (their task ended without adding their counter changes)."""

    detail_type: ClassVar[DetailType] = DetailType.RECONCILED
    restarted: list[str] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)
    settled: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(len(ids) for ids in self.to_wire().values())

    def to_wire(self) -> dict[str, Any]:
        return {
            "restarted": list(self.restarted),
            "recorded": list(self.recorded),
            "failed": list(self.failed),
            "released": list(self.released),
            "settled": list(self.settled),
        }


Announcement = (
    Started | Completed | Stopped | Paused | Resumed | Skipped | Tampered | Rejected | Reconciled
)
