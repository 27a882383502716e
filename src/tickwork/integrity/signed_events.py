"""Signed inbound events: proof that a Start, Stop, Pause, Resume or Run Now came from a holder
of the stack's signing secret (``RequireSignedStarts``), accepted once.

A signed detail carries::

    "signature": "t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<message>'>"

The message is the canonical detail — the detail *without* ``signature``, as JSON with sorted
keys, no spaces, UTF-8 — and, for every event but a Start, the detail-type before it and a
newline (``"Schedule Stop\\n{...}"``): a signed Pause can never pass for a Stop of the same id.
(A Start's message is its canonical detail alone, as it has always been.)

The timestamp must be within ``tolerance`` of now. Within that window a signature is accepted
once: the caller spends it in a ledger (``SignatureLedger``) before acting, and a request
signed before the latest change applied to its action is stale. ``sign_event`` is what a
publisher (or the ``tickwork`` CLI) calls to add the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tickwork.domain.errors import SignatureRefused
from tickwork.integrity.signature import signature_header, verify_signature

__all__ = [
    "SIGNATURE_FIELD",
    "TOLERANCE_SECONDS",
    "SignedRequest",
    "canonical_detail",
    "check_event_signature",
    "sign_event",
    "signed_message",
]

SIGNATURE_FIELD = "signature"
TOLERANCE_SECONDS = 300
_START = "Schedule Start"


@dataclass(frozen=True)
class SignedRequest:
    detail: dict[str, Any]  # without its signature
    signed_at: int  # unix seconds
    digest: str  # the HMAC that matched: what the ledger spends


def canonical_detail(detail: dict[str, Any]) -> bytes:
    unsigned = {key: value for key, value in detail.items() if key != SIGNATURE_FIELD}
    return json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def signed_message(detail_type: str, detail: dict[str, Any]) -> bytes:
    body = canonical_detail(detail)
    return body if detail_type == _START else f"{detail_type}\n".encode() + body


def sign_event(
    secret: bytes, detail_type: str, detail: dict[str, Any], timestamp: int
) -> dict[str, Any]:
    """``detail`` with its ``signature`` field, signed at ``timestamp`` (unix seconds)."""
    header = signature_header(secret, timestamp, signed_message(detail_type, detail))
    return {**detail, SIGNATURE_FIELD: header}


def check_event_signature(
    detail_type: str,
    detail: Any,
    secret: bytes,
    now: datetime,
    tolerance_seconds: int = TOLERANCE_SECONDS,
) -> SignedRequest:
    """The request, if its signature holds; else ``SignatureRefused`` saying why."""
    header = detail.get(SIGNATURE_FIELD) if isinstance(detail, dict) else None
    if not isinstance(header, str) or not header:
        raise SignatureRefused(
            "unsigned",
            f"this stack requires signed events: add a signature field to the {detail_type} "
            "(tickwork.integrity.signed_events.sign_event, or send it with the tickwork CLI)",
        )
    assert isinstance(detail, dict)
    timestamp, digests = _parts(header)
    if timestamp is None or not digests:
        raise SignatureRefused("malformed", 'write it as "t=<unix seconds>,v1=<hex hmac>"')
    skew = abs(now.timestamp() - timestamp)
    if skew > tolerance_seconds:
        raise SignatureRefused(
            "expired",
            f"signed {skew:.0f}s away from now, outside {tolerance_seconds}s: a replay, or "
            "a clock to fix; sign it again when sending",
        )
    message = signed_message(detail_type, detail)
    if not verify_signature(secret, header, message, now, tolerance_seconds):
        raise SignatureRefused(
            "forged",
            f"the signature does not match this {detail_type} detail and the stack's signing "
            "secret",
        )
    expected = signature_header(secret, timestamp, message).split("v1=", 1)[1]
    unsigned = {key: value for key, value in detail.items() if key != SIGNATURE_FIELD}
    return SignedRequest(unsigned, timestamp, expected)


def _parts(header: str) -> tuple[int | None, list[str]]:
    timestamp: int | None = None
    digests: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1" and value:
            digests.append(value)
    return timestamp, digests
