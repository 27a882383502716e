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

Each is read by its declared wire model (``domain.fire_wire``, built at the first read): a value
that does not have its shape is refused with ``MalformedFire``, naming every bad field and its
fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from tickwork.domain.errors import MalformedFire
from tickwork.domain.events import DetailType
from tickwork.domain.fire_kinds import TICK_OUTCOMES, Outcome, Trigger
from tickwork.domain.times import ceil_ms, iso

__all__ = [
    "TICK_OUTCOMES",
    "CaughtFailure",
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
        from tickwork.domain import fire_wire as wired  # built at the first read

        return _order_of(wired.read(wired.OrderWire, wire, where, MalformedFire))


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
        from tickwork.domain import fire_wire as wired

        attempt = wired.read(wired.AttemptWire, wire, "payload", MalformedFire)
        return cls(
            order=_order_of(attempt.input),
            execution_arn=attempt.execution_arn or "",
            retry_count=attempt.retry_count,
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
        """How late it ran against its schedule: a fire asked for by hand (run now, a retry by
        hand, a backfilled occurrence) is never late, whatever its scheduled time."""
        if self.trigger is not Trigger.SCHEDULED:
            return 0
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
        from tickwork.domain import fire_wire as wired

        tick = wired.read(wired.TickWire, wire, where, MalformedFire)
        return cls(
            action_id=tick.action_id,
            generation=tick.generation,
            occurrence=tick.occurrence,
            scheduled_time=tick.scheduled_time,
            actual_time=tick.actual_time,
            attempts=tick.attempts,
            action=tick.action,
            outcome=tick.outcome,
            execution_name=tick.execution_name,
            idempotency_key=tick.idempotency_key,
            result=tick.result,
            data=tick.data,
            metadata=tick.metadata,
            manual=tick.manual,
            trigger=tick.trigger,
            proof=tick.proof or "",
            slot_waits=tick.slot_waits,
            execution_arn=tick.execution_arn or "",
            recorded=tick.recorded,
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
    # When its last attempt ended: the overlap window closes there, not at its recording (a
    # report the bus refused is recorded late). None: not known (a report rebuilt by the
    # reconciler from an execution that ended without one), the recording's own moment.
    failed_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.failed_at is not None:  # kept to the millisecond, as on the wire
            object.__setattr__(self, "failed_at", ceil_ms(self.failed_at))

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
            **({"failedAt": iso(self.failed_at)} if self.failed_at else {}),
            **({"proof": self.proof} if self.proof else {}),
        }

    @classmethod
    def from_wire(cls, wire: Any, where: str = "detail") -> FireFailure:
        from tickwork.domain import fire_wire as wired

        failure = wired.read(wired.FailureWire, wire, where, MalformedFire)
        return cls(
            action_id=failure.action_id,
            generation=failure.generation,
            occurrence=failure.occurrence,
            scheduled_time=failure.scheduled_time,
            execution_name=failure.execution_name,
            error=failure.error,
            cause=failure.cause,
            manual=failure.manual,
            trigger=failure.trigger,
            proof=failure.proof or "",
            execution_arn=failure.execution_arn or "",
            failed_at=failure.failed_at,
        )


@dataclass(frozen=True)
class CaughtFailure:
    """What the fire machine's Catch hands its *Prove failure* step: the fire's order (the
    execution's input) and the error it caught (``$.error``: ``Error`` and ``Cause``)."""

    order: FireOrder
    error: str = "States.Unknown"
    cause: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {**self.order.to_wire(), "error": {"Error": self.error, "Cause": self.cause}}

    @classmethod
    def from_wire(cls, wire: Any, where: str = "report") -> CaughtFailure:
        from tickwork.domain import fire_wire as wired

        report = wired.read(wired.CaughtWire, wire, where, MalformedFire)
        caught = report.error or wired.ErrorWire()
        return cls(_order_of(report), caught.error or "States.Unknown", caught.cause)


def _order_of(wire: Any) -> FireOrder:
    """The order a read ``OrderWire`` holds."""
    return FireOrder(
        action_id=wire.action_id,
        generation=wire.generation,
        occurrence=wire.occurrence,
        fire_at=wire.fire_at,
        wait_until=wire.wait_until,
        leg=wire.leg,
        repair=wire.repair,
        manual=wire.manual,
        trigger=wire.trigger,
        attempts_before=wire.attempts_before,
        proof=wire.proof or "",
    )
