"""The seal on a stored calendar: an HMAC over its content (name, version, time written, zone,
dates, hours, description), written by tickwork when it stores the calendar and checked each
time a fire or a Start reads it. A calendar edited in the table outside tickwork no longer
matches its seal: its content is not taken (docs/protocol.md, "Calendars under the seal").

``c1`` is the HMAC-SHA256 of the canonical form of ``{"calendar": <content>}`` cut to its
first 128 bits (32 hex digits), as the record's seal is. The wrapping key keeps a calendar's
seal from ever matching a record's content and the other way round; the name inside the
content keeps a calendar's seal from vouching for another calendar.

Pure: the key is passed in.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from tickwork.integrity.canonical import canonical_json

__all__ = ["CALENDAR_SEAL_VERSION", "calendar_seal", "calendar_seal_matches"]

CALENDAR_SEAL_VERSION = "c1"
_CUT = 32  # hex digits kept of the HMAC


def calendar_seal(key: bytes, content: dict[str, Any]) -> str:
    digest = hmac.new(key, canonical_json({"calendar": content}), hashlib.sha256).hexdigest()
    return f"{CALENDAR_SEAL_VERSION}={digest[:_CUT]}"


def calendar_seal_matches(key: bytes, seal: Any, content: dict[str, Any]) -> bool:
    """Whether ``seal`` is the stack's seal over ``content``; a missing or malformed seal does
    not match."""
    if not isinstance(seal, str) or not seal.startswith(f"{CALENDAR_SEAL_VERSION}="):
        return False
    return hmac.compare_digest(seal, calendar_seal(key, content))
