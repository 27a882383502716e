"""HMAC-SHA256 signatures ``t=<unix seconds>,v1=<hex>``: on outbound HTTP fulfillments (and
their check for receivers), and under signed inbound events (``signed_events``).

Every signed request carries::

    X-Tickwork-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">

A receiver checks it against the shared secret and the raw request body, before parsing::

    from tickwork.integrity.signature import verify_signature

    ok = verify_signature(
        secret, request.headers["X-Tickwork-Signature"], raw_body, now=time.time()
    )

Several ``v1=`` entries may appear (a secret being rotated); one match is enough. The
timestamp bounds replays to ``tolerance_seconds`` either side of ``now``; within that
window, dedupe on the ``Idempotency-Key`` header: a UUID of the fire, the same on every
attempt of it and never the same for two fires.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from datetime import datetime

__all__ = ["SIGNATURE_HEADER", "sign", "signature_header", "verify_signature"]

SIGNATURE_HEADER = "X-Tickwork-Signature"


def sign(secret: bytes, timestamp: int, body: bytes) -> str:
    """Hex HMAC-SHA256 of ``f"{timestamp}.{body}"``."""
    return hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(secret: bytes, timestamp: int, body: bytes) -> str:
    return f"t={timestamp},v1={sign(secret, timestamp, body)}"


def verify_signature(
    secret: bytes | str,
    header: str | None,
    body: bytes | str,
    now: datetime | float | None = None,
    tolerance_seconds: int = 300,
) -> bool:
    """True when ``header`` signs ``body`` with ``secret`` within ``tolerance_seconds`` of now.

    ``secret`` is the stack's HTTP signing key as its secret holds it (text, or its bytes);
    ``body`` the request body exactly as received (bytes, or text: UTF-8); ``now`` an aware
    datetime or unix seconds (default: this machine's clock). A missing or malformed header is
    False, never an exception.
    """
    if not isinstance(secret, bytes | str) or not isinstance(body, bytes | str):
        raise TypeError(
            "verify_signature(secret, header, body): secret and body must be str or bytes, got "
            f"{type(secret).__name__} and {type(body).__name__} (pass the raw request body, "
            "not parsed JSON)"
        )
    if not header or not isinstance(header, str):
        return False
    timestamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1":
            candidates.append(value)
    if timestamp is None or not candidates:
        return False
    if now is None:
        now = time.time()
    now_seconds = now.timestamp() if isinstance(now, datetime) else float(now)
    if abs(now_seconds - timestamp) > tolerance_seconds:
        return False
    raw = body.encode() if isinstance(body, str) else body
    shared = secret.encode() if isinstance(secret, str) else secret
    expected = sign(shared, timestamp, raw)
    return any(hmac.compare_digest(expected, c) for c in candidates)
