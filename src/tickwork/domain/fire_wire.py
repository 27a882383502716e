"""The declared models the fire contract's values are read by (``domain.fire``): what each must
be when it arrives. Imported when the first value is read, so a function that reads none does
not build them."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainValidator

from tickwork.domain.fire_kinds import TICK_OUTCOMES, Outcome, Trigger
from tickwork.domain.wire import (
    Flag,
    FromZero,
    Instant,
    JsonObject,
    OptionalText,
    Positive,
    Text,
    Whole,
    WireModel,
    one_of,
    read,
)

__all__ = [
    "AttemptWire",
    "CaughtWire",
    "ErrorWire",
    "FailureWire",
    "OrderWire",
    "TickWire",
    "read",
]


def _any_text(value: Any) -> str | None:
    """An error's cause, as the machine caught it: text, or anything else made text."""
    return None if value is None else value if isinstance(value, str) else str(value)


_Trigger = Annotated[Trigger, PlainValidator(one_of(Trigger, "a trigger"))]
_TickOutcome = Annotated[
    Outcome, PlainValidator(one_of(Outcome, "the outcome of a tick", sorted(TICK_OUTCOMES)))
]


class OneFireWire(WireModel):
    action_id: Text = Field(alias="id")
    generation: Positive
    occurrence: FromZero


class OrderWire(OneFireWire):
    fire_at: Instant
    wait_until: Instant
    leg: FromZero = 0
    repair: FromZero = 0
    manual: FromZero = 0
    trigger: _Trigger = Trigger.SCHEDULED
    attempts_before: FromZero = 0
    proof: OptionalText = None


class AttemptWire(WireModel):
    input: OrderWire
    execution_name: Text  # required: the state machine always sends it
    execution_arn: OptionalText = None
    retry_count: FromZero = 0


class TickWire(OneFireWire):
    scheduled_time: Instant
    actual_time: Instant
    late_ms: Whole  # derived from the two times; checked for shape only
    attempts: Positive
    action: Text
    outcome: _TickOutcome
    execution_name: Text
    idempotency_key: Text
    result: JsonObject
    data: JsonObject
    metadata: JsonObject
    manual: FromZero = 0
    trigger: _Trigger = Trigger.SCHEDULED
    proof: OptionalText = None
    slot_waits: FromZero = 0
    execution_arn: OptionalText = None
    recorded: Flag = False


class FailureWire(OneFireWire):
    scheduled_time: Instant
    execution_name: Text
    error: Text
    cause: OptionalText = None
    manual: FromZero = 0
    trigger: _Trigger = Trigger.SCHEDULED
    proof: OptionalText = None
    execution_arn: OptionalText = None
    failed_at: Instant | None = None


class ErrorWire(BaseModel):
    """The error a state machine's Catch puts at ``$.error``."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    error: Annotated[str | None, PlainValidator(_any_text)] = Field(default=None, alias="Error")
    cause: Annotated[str | None, PlainValidator(_any_text)] = Field(default=None, alias="Cause")


def _caught(value: Any) -> Any:
    """The caught error as the machine put it: an object, or nothing to read (None)."""
    return value if isinstance(value, dict) else None


class CaughtWire(OrderWire):
    error: Annotated[ErrorWire | None, BeforeValidator(_caught)] = None
