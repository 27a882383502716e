"""Signed Schedule Start events — the Start's case of ``tickwork.integrity.signed_events``, kept
under the names publishers already call (``sign_start``, ``check_start_signature``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tickwork.integrity.signed_events import (
    SIGNATURE_FIELD,
    TOLERANCE_SECONDS,
    canonical_detail,
    check_event_signature,
    sign_event,
)

__all__ = ["SIGNATURE_FIELD", "canonical_detail", "check_start_signature", "sign_start"]

_START = "Schedule Start"


def sign_start(secret: bytes, detail: dict[str, Any], timestamp: int) -> dict[str, Any]:
    """``detail`` with its ``signature`` field, signed at ``timestamp`` (unix seconds)."""
    return sign_event(secret, _START, detail, timestamp)


def check_start_signature(
    detail: dict[str, Any], secret: bytes, now: datetime, tolerance_seconds: int = TOLERANCE_SECONDS
) -> dict[str, Any]:
    """The detail without its signature, if the signature holds; else ``SignatureRefused``."""
    return check_event_signature(_START, detail, secret, now, tolerance_seconds).detail
