"""GIVEN a stack that requires signed Starts WHEN a Start arrives THEN only one signed with the
secret, recently, over exactly this detail is accepted; every other is refused with a reason."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tickwork.domain.errors import SignatureRefused
from tickwork.integrity.start_signature import check_start_signature, sign_start

SECRET = b"s3cret-for-tests"
NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
DETAIL = {"id": "pay:42", "duration": "5m", "data": {"amount": 10, "note": "café"}}


def test_a_fresh_signature_over_the_detail_is_accepted_and_removed() -> None:
    signed = sign_start(SECRET, DETAIL, int(NOW.timestamp()))
    assert check_start_signature(signed, SECRET, NOW) == DETAIL


def test_key_order_does_not_matter() -> None:
    signed = sign_start(SECRET, DETAIL, int(NOW.timestamp()))
    reordered = dict(reversed(list(signed.items())))
    assert check_start_signature(reordered, SECRET, NOW) == DETAIL


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        (lambda d: {k: v for k, v in d.items() if k != "signature"}, "unsigned"),
        (lambda d: {**d, "signature": "v1=abc"}, "malformed"),
        (lambda d: {**d, "data": {"amount": 1_000_000, "note": "café"}}, "forged"),
        (lambda d: {**d, "id": "pay:43"}, "forged"),
        (lambda d: {**d, "signature": d["signature"].replace("v1=", "v1=0")}, "forged"),
    ],
)
def test_unsigned_malformed_and_altered_starts_are_refused(tamper, reason) -> None:
    signed = sign_start(SECRET, DETAIL, int(NOW.timestamp()))
    with pytest.raises(SignatureRefused) as refused:
        check_start_signature(tamper(signed), SECRET, NOW)
    assert refused.value.reason == reason


def test_another_secret_is_refused() -> None:
    signed = sign_start(b"someone-else", DETAIL, int(NOW.timestamp()))
    with pytest.raises(SignatureRefused, match="forged"):
        check_start_signature(signed, SECRET, NOW)


def test_a_replay_outside_the_window_is_refused() -> None:
    signed = sign_start(SECRET, DETAIL, int(NOW.timestamp()) - 301)
    with pytest.raises(SignatureRefused, match="expired"):
        check_start_signature(signed, SECRET, NOW)
    # and just inside it, accepted
    inside = sign_start(SECRET, DETAIL, int(NOW.timestamp()) - 299)
    assert check_start_signature(inside, SECRET, NOW) == DETAIL
