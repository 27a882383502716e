"""Signed Schedule Start events: proof that a Start came from a holder of the signing secret.

When a signing secret is configured, a Start detail must carry::

    "signature": "t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<canonical detail>'>"

where the canonical detail is the detail *without* ``signature``, as JSON with sorted keys,
no spaces and UTF-8 (``canonical_detail``). The timestamp must be within ``tolerance`` of
now: an event captured and replayed later is refused. (A replay inside the window repeats an
identical Start, which tickwork already treats as the same request: nothing new happens.)

``sign_start`` is what a publisher (or ``tickwork send``) calls to add the field.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from tickwork.domain.errors import SignatureRefused
from tickwork.fulfillment.signature import signature_header, verify_signature

__all__ = ["SIGNATURE_FIELD", "canonical_detail", "check_start_signature", "sign_start"]

SIGNATURE_FIELD = "signature"


def canonical_detail(detail: dict[str, Any]) -> bytes:
    unsigned = {key: value for key, value in detail.items() if key != SIGNATURE_FIELD}
    return json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sign_start(secret: bytes, detail: dict[str, Any], timestamp: int) -> dict[str, Any]:
    """``detail`` with its ``signature`` field, signed at ``timestamp`` (unix seconds)."""
    header = signature_header(secret, timestamp, canonical_detail(detail))
    return {**detail, SIGNATURE_FIELD: header}


def check_start_signature(
    detail: dict[str, Any], secret: bytes, now: datetime, tolerance_seconds: int = 300
) -> dict[str, Any]:
    """The detail without its signature, if the signature holds; else ``SignatureRefused``."""
    header = detail.get(SIGNATURE_FIELD)
    if not isinstance(header, str) or not header:
        raise SignatureRefused(
            "unsigned", "this stack requires signed Starts: add a signature field (sign_start)"
        )
    timestamp = _timestamp(header)
    if timestamp is None:
        raise SignatureRefused("malformed", 'write it as "t=<unix seconds>,v1=<hex hmac>"')
    skew = abs(now.timestamp() - timestamp)
    if skew > tolerance_seconds:
        raise SignatureRefused(
            "expired",
            f"signed {skew:.0f}s away from now, outside {tolerance_seconds}s: a replay, or "
            "a clock to fix; sign it again when sending",
        )
    body = canonical_detail(detail)
    if not verify_signature(secret, header, body, now, tolerance_seconds):
        raise SignatureRefused(
            "forged", "the signature does not match the detail and the stack's signing secret"
        )
    return {key: value for key, value in detail.items() if key != SIGNATURE_FIELD}


def _timestamp(header: str) -> int | None:
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            return int(value)
    return None
