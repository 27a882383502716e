"""The declared model a batch order is read by (``domain.batch``): imported when the first one
is read."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, PlainValidator

from tickwork.domain.wire import FromZero, Instant, Positive, Text, WireModel, read

__all__ = ["BatchWire", "MemberWire", "read"]


def _proof(value: Any) -> str | None:
    """A proof that is not text proves nothing: read as none (the order is then refused as
    forged, announced for each member), never as a malformed payload."""
    return value if isinstance(value, str) else None


class MemberWire(WireModel):
    """A member as the pump writes it: the fire's key and fire time."""

    action_id: Text = Field(alias="id")
    generation: Positive
    occurrence: FromZero
    fire_at: Instant


class BatchWire(WireModel):
    wait_until: Instant
    fires: list[MemberWire]
    repair: FromZero = 0
    proof: Annotated[str | None, PlainValidator(_proof)] = None
