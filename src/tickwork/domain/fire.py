"""The fire contract: what crosses the state machine's boundaries for one fire, typed.

One fire passes four values, each parsed once where it arrives and written once where it
leaves; inside, times are aware UTC datetimes. On the wire (JSON) times are ``iso`` strings
(UTC, milliseconds, ``Z``) and names are camelCase. docs/contracts.md shows each shape.

- ``FireOrder`` — the execution's input: which fire (id, generation, occurrence), when it is
  due (``fireAt``) and when this execution's Wait ends (``waitUntil``), with the leg of a long
  wait and the number of a reconciler's repair execution. Written by ``usecases.launch``.
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
from typing import Any

from tickwork.domain.errors import FieldProblem, MalformedFire, ValidationFailed
from tickwork.domain.times import ceil_ms, iso, parse_iso

__all__ = ["FireAttempt", "FireFailure", "FireKey", "FireOrder", "Outcome", "Tick"]

FireKey = tuple[str, int, int]  # (action id, generation, occurrence): one fire


class Outcome(StrEnum):
    """What became of one occurrence (a tick carries the first three)."""

    FIRED = "FIRED"
    NO_ACTION = "NO_ACTION"  # nothing to run: the type is gone, or the record was tampered with
    SKIPPED = "SKIPPED"  # missed in an outage, and the catch-up policy said not to run it
    FAILED = "FAILED"  # failed past its retries


TICK_OUTCOMES = frozenset({Outcome.FIRED, Outcome.NO_ACTION, Outcome.SKIPPED})


@dataclass(frozen=True)
class FireOrder:
    action_id: str
    generation: int
    occurrence: int
    fire_at: datetime
    wait_until: datetime
    leg: int = 0
    repair: int = 0

    @property
    def key(self) -> FireKey:
        return (self.action_id, self.generation, self.occurrence)

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "id": self.action_id,
            "generation": self.generation,
            "occurrence": self.occurrence,
            "leg": self.leg,
            "fireAt": iso(self.fire_at),
            # Milliseconds kept: Step Functions truncates a Wait's timestamp to the second, and
            # the fulfill step sleeps off the rest so the fire is on time, never early.
            "waitUntil": iso(self.wait_until),
        }
        if self.repair:
            wire["repair"] = self.repair
        return wire

    @classmethod
    def from_wire(cls, wire: Any, where: str = "input") -> FireOrder:
        read = _Reader(wire, where)
        return read.done(
            cls(
                action_id=read.text("id"),
                generation=read.count("generation"),
                occurrence=read.count("occurrence"),
                fire_at=read.time("fireAt"),
                wait_until=read.time("waitUntil"),
                leg=read.count("leg", minimum=0, default=0),
                repair=read.count("repair", minimum=0, default=0),
            )
        )


@dataclass(frozen=True)
class FireAttempt:
    order: FireOrder
    execution_name: str
    retry_count: int = 0

    @property
    def attempt(self) -> int:
        return self.retry_count + 1

    def to_wire(self) -> dict[str, Any]:
        return {
            "input": self.order.to_wire(),
            "executionName": self.execution_name,
            "retryCount": self.retry_count,
        }

    @classmethod
    def from_wire(cls, wire: Any) -> FireAttempt:
        read = _Reader(wire, "payload")
        order = read.order("input")
        return read.done(
            cls(
                order=order or _NO_ORDER,
                execution_name=read.text("executionName"),
                retry_count=read.count("retryCount", minimum=0, default=0),
            )
        )


@dataclass(frozen=True)
class Tick:
    action_id: str
    generation: int
    occurrence: int
    scheduled_time: datetime
    actual_time: datetime
    attempts: int
    action: str
    outcome: Outcome
    execution_name: str
    result: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Kept to the millisecond, as on the wire: what is read back equals what was written.
        object.__setattr__(self, "actual_time", ceil_ms(self.actual_time))

    @property
    def key(self) -> FireKey:
        return (self.action_id, self.generation, self.occurrence)

    @property
    def late_ms(self) -> int:
        return int((self.actual_time - self.scheduled_time).total_seconds() * 1000)

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.action_id,
            "generation": self.generation,
            "occurrence": self.occurrence,
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
        }

    @classmethod
    def from_wire(cls, wire: Any, where: str = "detail") -> Tick:
        read = _Reader(wire, where)
        read.whole("lateMs")  # derived from the two times; checked for shape only
        return read.done(
            cls(
                action_id=read.text("id"),
                generation=read.count("generation"),
                occurrence=read.count("occurrence"),
                scheduled_time=read.time("scheduledTime"),
                actual_time=read.time("actualTime"),
                attempts=read.count("attempts"),
                action=read.text("action"),
                outcome=read.outcome("outcome"),
                execution_name=read.text("executionName"),
                result=read.mapping("result"),
                data=read.mapping("data"),
                metadata=read.mapping("metadata"),
            )
        )


@dataclass(frozen=True)
class FireFailure:
    action_id: str
    generation: int
    occurrence: int
    scheduled_time: datetime
    execution_name: str
    error: str
    cause: str | None = None

    @property
    def key(self) -> FireKey:
        return (self.action_id, self.generation, self.occurrence)

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.action_id,
            "generation": self.generation,
            "occurrence": self.occurrence,
            "scheduledTime": iso(self.scheduled_time),
            "executionName": self.execution_name,
            "error": self.error,
            "cause": self.cause,
        }

    @classmethod
    def from_wire(cls, wire: Any, where: str = "detail") -> FireFailure:
        read = _Reader(wire, where)
        return read.done(
            cls(
                action_id=read.text("id"),
                generation=read.count("generation"),
                occurrence=read.count("occurrence"),
                scheduled_time=read.time("scheduledTime"),
                execution_name=read.text("executionName"),
                error=read.text("error"),
                cause=read.optional_text("cause"),
            )
        )


_MISSING: Any = object()
_NO_TIME = datetime.min  # stands in for a refused time; done() refuses the whole value


class _Reader:
    """Reads the fields of one wire object, collecting every problem before refusing it."""

    def __init__(self, wire: Any, where: str) -> None:
        self._where = where
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
