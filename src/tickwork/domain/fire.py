"""The fire contract: what crosses the state machine's boundaries for one fire, typed.

One fire passes four values, each parsed once where it arrives and written once where it
leaves; inside, times are aware UTC datetimes. On the wire (JSON) times are ``iso`` strings
(UTC, milliseconds, ``Z``) and names are camelCase. docs/contracts.md shows each shape.

- ``FireOrder`` — the execution's input: which fire (id, generation, occurrence), when it is
  due (``fireAt``) and when this execution's Wait ends (``waitUntil``), with the leg of a long
  wait and the number of a reconciler's repair execution. Written by ``fire.launch``.
- ``FireAttempt`` — what the Fulfill task invokes the fulfill function with: the order as
  ``input``, the execution's name and ``$$.State.RetryCount``.
- ``Tick`` — what the fulfill function returns, which the state machine puts on the bus as the
  "Schedule Tick" detail as it is; the tick handler and the reconciler (from a succeeded
  execution's output) read it back.
- ``FireFailure`` — the "Schedule Failed" detail the state machine emits when the fulfillment
  failed past its retries (built by the machine from the order and the caught error); the
  tick handler reads it, and the reconciler makes one for a failure report that was lost.

A value that does not have its shape is refused with ``MalformedFire``, naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar

from tickwork.domain.errors import FieldProblem, MalformedFire, ValidationFailed
from tickwork.domain.events import DetailType
from tickwork.domain.times import ceil_ms, iso, parse_iso

__all__ = [
    "TICK_OUTCOMES",
    "FireAttempt",
    "FireFailure",
    "FireKey",
    "FireOrder",
    "Outcome",
    "Tick",
    "Trigger",
]

# (action id, generation, occurrence, manual): one fire. ``manual`` is 0 for the schedule's
# own fires and n for the n-th fire an operator asked for (run now, or a retry by hand).
FireKey = tuple[str, int, int, int]


class Outcome(StrEnum):
    """What became of one fire (a tick carries the first three)."""

    FIRED = "FIRED"
    NO_ACTION = "NO_ACTION"  # nothing to run: the type is gone, or the record was tampered with
    SKIPPED = "SKIPPED"  # missed (an outage, or paused), and not run
    FAILED = "FAILED"  # failed past its retries


TICK_OUTCOMES = frozenset({Outcome.FIRED, Outcome.NO_ACTION, Outcome.SKIPPED})


class Trigger(StrEnum):
    """Why a fire happened."""

    SCHEDULED = "SCHEDULED"  # the schedule's own occurrence
    RUN_NOW = "RUN_NOW"  # an operator's run now: one extra fire, the schedule unmoved
    RETRY = "RETRY"  # an operator's retry of a failed fire
    BACKFILL = "BACKFILL"  # an occurrence of a past range, run now (domain.backfill)


@dataclass(frozen=True)
class _OneFire:
    """The fields every value of one fire starts with."""

    action_id: str
    generation: int
    occurrence: int

    def _key_wire(self) -> dict[str, Any]:
        return {"id": self.action_id, "generation": self.generation, "occurrence": self.occurrence}


@dataclass(frozen=True)
class FireOrder(_OneFire):
    fire_at: datetime
    wait_until: datetime
    leg: int = 0
    repair: int = 0
    manual: int = 0
    trigger: Trigger = Trigger.SCHEDULED
    attempts_before: int = 0  # attempts it had in a batch before it was handed over to this one
    proof: str = ""  # made by the code that starts the execution: integrity.order_proof

    @property
    def key(self) -> FireKey:
        return (self.action_id, self.generation, self.occurrence, self.manual)

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            **self._key_wire(),
            "leg": self.leg,
            "fireAt": iso(self.fire_at),
            # Milliseconds kept: Step Functions truncates a Wait's timestamp to the second, and
            # the fulfill step sleeps off the rest so the fire is on time, never early.
            "waitUntil": iso(self.wait_until),
            "manual": self.manual,
            "trigger": str(self.trigger),
        }
        if self.repair:
            wire["repair"] = self.repair
        if self.attempts_before:
            wire["attemptsBefore"] = self.attempts_before
        if self.proof:
            wire["proof"] = self.proof
        return wire

    @classmethod
    def from_wire(cls, wire: Any, where: str = "input") -> FireOrder:
        read = _Reader(wire, where, minimum_occurrence=0)
        return read.done(
            cls(
                **read.key(),
                fire_at=read.time("fireAt"),
                wait_until=read.time("waitUntil"),
                leg=read.count("leg", minimum=0, default=0),
                repair=read.count("repair", minimum=0, default=0),
                manual=read.count("manual", minimum=0, default=0),
                trigger=read.trigger("trigger"),
                attempts_before=read.count("attemptsBefore", minimum=0, default=0),
                proof=read.optional_text("proof") or "",
            )
        )


@dataclass(frozen=True)
class FireAttempt:
    order: FireOrder
    # The execution's whole identity ($$.Execution.Id): its machine and its name. An execution
    # started before the payload carried it gives its name only: the handler names it on the
    # machine whose task sends the payload ('' until it does).
    execution_arn: str
    retry_count: int = 0

    @property
    def execution_name(self) -> str:
        return self.execution_arn.rpartition(":")[2]

    @property
    def attempt(self) -> int:
        """Which attempt this is: the state's retries so far, and those made in a batch."""
        return self.retry_count + 1 + self.order.attempts_before

    def to_wire(self) -> dict[str, Any]:
        return {
            "input": self.order.to_wire(),
            "executionName": self.execution_name,
            "executionArn": self.execution_arn,
            "retryCount": self.retry_count,
        }

    @classmethod
    def from_wire(cls, wire: Any) -> FireAttempt:
        read = _Reader(wire, "payload")
        order = read.order("input")
        read.text("executionName")  # required: the state machine always sends it
        return read.done(
            cls(
                order=order or _NO_ORDER,
                execution_arn=read.optional_text("executionArn") or "",
                retry_count=read.count("retryCount", minimum=0, default=0),
            )
        )


@dataclass(frozen=True)
class Tick(_OneFire):
    detail_type: ClassVar[DetailType] = DetailType.TICK
    scheduled_time: datetime
    actual_time: datetime
    attempts: int
    action: str
    outcome: Outcome
    execution_name: str
    idempotency_key: str
    result: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    manual: int = 0
    trigger: Trigger = Trigger.SCHEDULED
    proof: str = ""  # made by the fulfill step: domain.fire_proof
    slot_waits: int = 0  # retries that waited for a concurrency slot (not in ``attempts``)
    execution_arn: str = ""  # the execution that ran it, whole (its machine and name)
    # The fire was recorded before its tick was put on the bus (a batch's task, a lone fire's
    # Fulfill): the tick function has nothing to record. Ticks put by a fire machine's own
    # Emit tick state (executions started before) carry none: the tick function records them.
    recorded: bool = False

    def __post_init__(self) -> None:
        # Kept to the millisecond, as on the wire: what is read back equals what was written.
        object.__setattr__(self, "actual_time", ceil_ms(self.actual_time))

    @property
    def key(self) -> FireKey:
        return (self.action_id, self.generation, self.occurrence, self.manual)

    @property
    def late_ms(self) -> int:
        return int((self.actual_time - self.scheduled_time).total_seconds() * 1000)

    def to_wire(self) -> dict[str, Any]:
        return {
            **self._key_wire(),
            "manual": self.manual,
            "trigger": str(self.trigger),
            "idempotencyKey": self.idempotency_key,
            "scheduledTime": iso(self.scheduled_time),
            "actualTime": iso(self.actual_time),
            "lateMs": self.late_ms,
            "attempts": self.attempts,
            "action": self.action,
            "data": self.data,
            "metadata": self.metadata,
            "outcome": str(self.outcome),
            "result": self.result,
            "executionName": self.execution_name,
            **({"executionArn": self.execution_arn} if self.execution_arn else {}),
            # Only when it waited: the tick of a fire that never waited is as it always was.
            **({"slotWaits": self.slot_waits} if self.slot_waits else {}),
            **({"recorded": True} if self.recorded else {}),
            **({"proof": self.proof} if self.proof else {}),
        }

    @classmethod
    def from_wire(cls, wire: Any, where: str = "detail") -> Tick:
        read = _Reader(wire, where, minimum_occurrence=0)
        read.whole("lateMs")  # derived from the two times; checked for shape only
        return read.done(
            cls(
                **read.key(),
                scheduled_time=read.time("scheduledTime"),
                actual_time=read.time("actualTime"),
                attempts=read.count("attempts"),
                action=read.text("action"),
                outcome=read.outcome("outcome"),
                execution_name=read.text("executionName"),
                idempotency_key=read.text("idempotencyKey"),
                result=read.mapping("result"),
                data=read.mapping("data"),
                metadata=read.mapping("metadata"),
                manual=read.count("manual", minimum=0, default=0),
                trigger=read.trigger("trigger"),
                proof=read.optional_text("proof") or "",
                slot_waits=read.count("slotWaits", minimum=0, default=0),
                execution_arn=read.optional_text("executionArn") or "",
                recorded=read.flag("recorded"),
            )
        )


@dataclass(frozen=True)
class FireFailure(_OneFire):
    detail_type: ClassVar[DetailType] = DetailType.FAILED
    scheduled_time: datetime
    execution_name: str
    error: str
    cause: str | None = None
    manual: int = 0
    trigger: Trigger = Trigger.SCHEDULED
    proof: str = ""  # made by the fulfill step: domain.fire_proof
    execution_arn: str = ""  # the execution whose fire failed, whole (its machine and name)

    @property
    def key(self) -> FireKey:
        return (self.action_id, self.generation, self.occurrence, self.manual)

    def to_wire(self) -> dict[str, Any]:
        return {
            **self._key_wire(),
            "manual": self.manual,
            "trigger": str(self.trigger),
            "scheduledTime": iso(self.scheduled_time),
            "executionName": self.execution_name,
            **({"executionArn": self.execution_arn} if self.execution_arn else {}),
            "error": self.error,
            "cause": self.cause,
            **({"proof": self.proof} if self.proof else {}),
        }

    @classmethod
    def from_wire(cls, wire: Any, where: str = "detail") -> FireFailure:
        read = _Reader(wire, where, minimum_occurrence=0)
        return read.done(
            cls(
                **read.key(),
                scheduled_time=read.time("scheduledTime"),
                execution_name=read.text("executionName"),
                error=read.text("error"),
                cause=read.optional_text("cause"),
                manual=read.count("manual", minimum=0, default=0),
                trigger=read.trigger("trigger"),
                proof=read.optional_text("proof") or "",
                execution_arn=read.optional_text("executionArn") or "",
            )
        )


_MISSING: Any = object()
_NO_TIME = datetime.min  # stands in for a refused time; done() refuses the whole value


class _Reader:
    """Reads the fields of one wire object, collecting every problem before refusing it."""

    def __init__(self, wire: Any, where: str, minimum_occurrence: int = 1) -> None:
        self._where = where
        self._minimum_occurrence = minimum_occurrence
        self._wire: Mapping[str, Any] = wire if isinstance(wire, Mapping) else {}
        self._problems: list[FieldProblem] = []
        self._problems_at_root = not isinstance(wire, Mapping)
        if self._problems_at_root:
            self._refuse(where, "is not a JSON object", "send the documented object")

    def done[T](self, value: T) -> T:
        if self._problems:
            raise MalformedFire(self._problems)
        return value

    def _refuse(self, name: str, problem: str, fix: str) -> None:
        self._problems.append(FieldProblem(name, problem, fix))

    def _path(self, name: str) -> str:
        return f"{self._where}.{name}"

    def _get(self, name: str, required: bool = True) -> Any:
        if name in self._wire:
            return self._wire[name]
        if required and not self._problems_at_root:
            self._refuse(self._path(name), "is missing", "add it (see docs/contracts.md)")
        return _MISSING

    def key(self) -> dict[str, Any]:
        """The fire's identity, as keyword arguments of the value being read."""
        return {
            "action_id": self.text("id"),
            "generation": self.count("generation"),
            "occurrence": self.count("occurrence", minimum=self._minimum_occurrence),
        }

    def trigger(self, name: str) -> Trigger:
        value = self._get(name, required=False)
        if value is _MISSING:
            return Trigger.SCHEDULED
        if value not in set(Trigger):
            self._refuse(
                self._path(name),
                f"{value!r} is not a trigger",
                f"use one of {', '.join(Trigger)}",
            )
            return Trigger.SCHEDULED
        return Trigger(value)

    def text(self, name: str) -> str:
        value = self._get(name)
        if value is not _MISSING and (not isinstance(value, str) or not value):
            self._refuse(self._path(name), f"{value!r} is not a non-empty string", "give one")
        return value if isinstance(value, str) else ""

    def optional_text(self, name: str) -> str | None:
        value = self._get(name, required=False)
        if value is _MISSING or value is None:
            return None
        if not isinstance(value, str):
            self._refuse(self._path(name), f"{value!r} is not a string", "give a string or null")
            return None
        return value

    def count(self, name: str, minimum: int = 1, default: int | None = None) -> int:
        value = self._get(name, required=default is None)
        if value is _MISSING:
            return minimum if default is None else default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self._refuse(
                self._path(name),
                f"{value!r} is not a whole number of {minimum} or more",
                f"give a whole number of {minimum} or more",
            )
            return minimum
        return value

    def flag(self, name: str) -> bool:
        """An optional true/false (absent: false)."""
        value = self._get(name, required=False)
        if value is _MISSING or value is None:
            return False
        if not isinstance(value, bool):
            self._refuse(self._path(name), f"{value!r} is not true or false", "give a boolean")
            return False
        return value

    def whole(self, name: str) -> None:
        value = self._get(name)
        if value is not _MISSING and (isinstance(value, bool) or not isinstance(value, int)):
            self._refuse(self._path(name), f"{value!r} is not a whole number", "give one")

    def time(self, name: str) -> datetime:
        value = self._get(name)
        if value is _MISSING:
            return _NO_TIME
        try:
            return parse_iso(value, self._path(name))
        except ValidationFailed as refused:
            self._problems.extend(refused.problems)
            return _NO_TIME

    def mapping(self, name: str) -> dict[str, Any]:
        value = self._get(name)
        if value is _MISSING:
            return {}
        if not isinstance(value, dict):
            self._refuse(self._path(name), f"{value!r} is not a JSON object", "give an object")
            return {}
        return value

    def outcome(self, name: str) -> Outcome:
        value = self._get(name)
        if value is _MISSING:
            return Outcome.FIRED
        if value not in TICK_OUTCOMES:
            self._refuse(
                self._path(name),
                f"{value!r} is not the outcome of a tick",
                f"use one of {', '.join(sorted(TICK_OUTCOMES))}",
            )
            return Outcome.FIRED
        return Outcome(value)

    def order(self, name: str) -> FireOrder | None:
        value = self._get(name)
        if value is _MISSING:
            return None
        try:
            return FireOrder.from_wire(value, self._path(name))
        except ValidationFailed as refused:
            self._problems.extend(refused.problems)
            return None


_NO_ORDER = FireOrder("", 0, 0, _NO_TIME, _NO_TIME)  # stands in for a refused order
