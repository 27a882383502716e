"""verify_signature: what a receiver of a signed HTTP fulfillment checks."""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime, timedelta

import pytest

from tickwork.integrity.signature import sign, signature_header, verify_signature

SECRET = b"receiver-shared-secret"
SIGNED_AT = datetime(2025, 1, 15, 8, 35, 17, tzinfo=UTC)
T = int(SIGNED_AT.timestamp())
BODY = b'{"invoice":"inv-1"}'
HEADER = signature_header(SECRET, T, BODY)


def test_header_has_the_documented_shape() -> None:
    # GIVEN a secret, a time and a body WHEN the header is built
    # THEN it is t=<unix seconds>,v1=<hex hmac-sha256 of "t.body">
    expected = hmac.new(SECRET, f"{T}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert f"t={T},v1={expected}" == HEADER


@pytest.mark.parametrize(
    ("header", "body", "now", "expected"),
    [
        pytest.param(HEADER, BODY, SIGNED_AT, True, id="valid"),
        pytest.param(HEADER, BODY.decode(), SIGNED_AT, True, id="valid-text-body"),
        pytest.param(HEADER, BODY, T + 299.0, True, id="valid-unix-seconds-now"),
        pytest.param(HEADER, BODY, SIGNED_AT + timedelta(seconds=300), True, id="edge-of-window"),
        pytest.param(HEADER, b'{"invoice":"inv-2"}', SIGNED_AT, False, id="body-changed"),
        pytest.param(HEADER, BODY, SIGNED_AT + timedelta(seconds=301), False, id="too-old"),
        pytest.param(HEADER, BODY, SIGNED_AT - timedelta(seconds=301), False, id="from-future"),
        pytest.param(signature_header(b"other", T, BODY), BODY, SIGNED_AT, False, id="wrong-key"),
        pytest.param(f"t={T + 1},v1={sign(SECRET, T, BODY)}", BODY, SIGNED_AT, False, id="t-swap"),
        pytest.param(
            f"t={T},v1={sign(b'old', T, BODY)},v1={sign(SECRET, T, BODY)}",
            BODY,
            SIGNED_AT,
            True,
            id="rotated-secrets",
        ),
        pytest.param(f"v1={sign(SECRET, T, BODY)}", BODY, SIGNED_AT, False, id="no-timestamp"),
        pytest.param(f"t={T}", BODY, SIGNED_AT, False, id="no-signature"),
        pytest.param("garbage", BODY, SIGNED_AT, False, id="malformed"),
        pytest.param("", BODY, SIGNED_AT, False, id="empty"),
        pytest.param(None, BODY, SIGNED_AT, False, id="missing"),
    ],
)
def test_verify_signature(
    header: str | None, body: bytes | str, now: datetime | float, expected: bool
) -> None:
    # GIVEN a received header and body WHEN the receiver verifies them at `now`
    # THEN only an untampered body, signed with the secret, inside the window passes
    assert verify_signature(SECRET, header, body, now) is expected


def test_tolerance_is_configurable() -> None:
    # GIVEN a signature 10 s old WHEN checked with a 5 s tolerance THEN it is refused
    later = SIGNED_AT + timedelta(seconds=10)
    assert verify_signature(SECRET, HEADER, BODY, later, tolerance_seconds=5) is False
    assert verify_signature(SECRET, HEADER, BODY, later, tolerance_seconds=10) is True
