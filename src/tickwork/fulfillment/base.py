"""What every fulfillment is: a data model for its action type and one ``fulfill`` call."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, ValidationInfo
from pydantic_core import PydanticCustomError

__all__ = [
    "STORED",
    "Fulfillment",
    "FulfillmentData",
    "FulfillmentRequest",
    "data_problem",
    "is_stored",
]

# The validation context of an action's data read from its record at a fire (``validate_data``
# with ``stored``), not of a new Start: a limit tightened since it was created lets it fire.
STORED: dict[str, Any] = {"stored": True}


class FulfillmentData(BaseModel):
    """Base of a fulfillment's ``data`` model: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def data_problem(problem: str, fix: str, field: str | None = None) -> PydanticCustomError:
    """A validation error for a data model that carries its own fix.

    Raise it from a validator; the registry reports ``problem`` and ``fix`` as they are, under
    ``data.<field>`` when a model's own validator names the field (pydantic gives it no place).
    """
    context = {"problem": problem, "fix": fix, **({"field": field} if field else {})}
    return PydanticCustomError("tickwork_data", "{problem}", context)


def is_stored(info: ValidationInfo) -> bool:
    """Whether a validator checks an action's stored data at its fire (``STORED``): what a
    Start is held to since may be stricter than what it was held to when it was taken."""
    return bool(info.context and info.context.get("stored"))


@dataclass(frozen=True)
class FulfillmentRequest:
    """One fire of one action, handed to its fulfillment.

    ``idempotency_key`` names the fire: the same on every attempt of it (a retried attempt
    carries it with a higher ``attempt``), and never the same for two fires, across replaces,
    updates and purges. Every target passes it on, for its receiver to dedupe on.
    """

    action_id: str
    action: str
    occurrence: int
    scheduled_time: datetime
    data: BaseModel
    idempotency_key: str
    metadata: dict[str, Any] = field(default_factory=dict)
    attempt: int = 1
    role_arn: str | None = None  # the action's execution role for its target, if it has one
    trigger: str = "SCHEDULED"  # why it fires: the schedule, or RUN_NOW, RETRY, BACKFILL, CATCH_UP

    def __post_init__(self) -> None:
        if self.scheduled_time.utcoffset() is None:
            raise ValueError("scheduled_time must be timezone-aware")
        object.__setattr__(self, "scheduled_time", self.scheduled_time.astimezone(UTC))


class Fulfillment(Protocol):
    """Performs the work of one action type.

    ``fulfill`` returns a small JSON-ready result (it travels in the Schedule Tick event),
    raises ``TransientFulfillmentError`` for a failure a later attempt may not meet and
    ``PermanentFulfillmentError`` for one no retry can fix.
    """

    action_type: ClassVar[str]
    data_model: ClassVar[type[BaseModel]]

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]: ...
