"""The opaque cursor of a page: where the next page starts.

``encode`` writes a position as URL-safe base64 of compact JSON; ``decode`` reads back only
what ``encode`` could have written — a bounded text, an object with an ``id`` that is an action
id and, for pages in fire order, a ``t`` that is an epoch-millisecond fire time — and refuses
anything else as a 400 naming ``cursor``, before any of it reaches a query.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.identifiers import ID_PATTERN

__all__ = ["MAX_CURSOR_LENGTH", "Position", "decode", "encode"]

MAX_CURSOR_LENGTH = 1024
# Epoch milliseconds of 9999-12-31T23:59:59.999Z: no fire time tickwork writes is later.
_LAST_MS = 253_402_300_799_999


@dataclass(frozen=True)
class Position:
    action_id: str  # the last id of the page before
    fire_ms: int | None = None  # its fire time, for pages in fire order


def encode(position: Position) -> str:
    fields: dict[str, object] = {"id": position.action_id}
    if position.fire_ms is not None:
        fields["t"] = position.fire_ms
    return base64.urlsafe_b64encode(json.dumps(fields, separators=(",", ":")).encode()).decode()


def decode(cursor: str | None, in_fire_order: bool = False) -> Position | None:
    """The position ``cursor`` names (None for the first page); one this API did not issue, or
    one issued for a page of another order (``in_fire_order`` needs a fire time), is refused."""
    if not cursor:
        return None
    try:
        if len(cursor) > MAX_CURSOR_LENGTH:
            raise ValueError("too long")
        fields = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        return _position(fields, in_fire_order)
    except (ValueError, UnicodeError, binascii.Error) as error:
        raise ValidationFailed.of(
            "cursor",
            "is not a cursor this API returned",
            "pass nextCursor from the previous page as is, with the same filters",
        ) from error


def _position(fields: object, in_fire_order: bool) -> Position:
    if not isinstance(fields, dict) or not set(fields) <= {"id", "t"}:
        raise ValueError("not a position")
    action_id, fire_ms = fields.get("id"), fields.get("t")
    if not isinstance(action_id, str) or not ID_PATTERN.fullmatch(action_id):
        raise ValueError("not an action id")
    if fire_ms is None:
        if in_fire_order:
            raise ValueError("no fire time")
        return Position(action_id)
    if isinstance(fire_ms, bool) or not isinstance(fire_ms, int) or not 0 <= fire_ms <= _LAST_MS:
        raise ValueError("not a fire time")
    return Position(action_id, fire_ms)
