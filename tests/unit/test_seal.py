"""GIVEN a sealed action WHEN any field that decides what runs changes THEN the seal no longer
matches; with the same fields and key it always does."""

from __future__ import annotations

import pytest

from tickwork.domain.seal import compute_seal, seal_matches

KEY = b"seal-key"
FIELDS = {
    "action_id": "hook:1",
    "action": "HTTP_REQUEST",
    "data": {"url": "https://example.com/hook", "method": "POST"},
    "metadata": {"team": "billing"},
    "schedule": {"kind": "once", "anchor": "2026-03-07T12:00:00Z"},
}


def test_the_seal_matches_its_fields() -> None:
    seal = compute_seal(KEY, **FIELDS)
    assert seal.startswith("v1=")
    assert seal_matches(KEY, seal, **FIELDS)


@pytest.mark.parametrize(
    "change",
    [
        {"action_id": "hook:2"},
        {"action": "SEND_NOTIFICATION"},
        {"data": {"url": "http://169.254.169.254/latest/meta-data/", "method": "POST"}},
        {"metadata": {"team": "attacker"}},
        {"schedule": {"kind": "once", "anchor": "2026-03-07T12:00:01Z"}},
    ],
)
def test_changing_a_sealed_field_breaks_the_seal(change) -> None:
    seal = compute_seal(KEY, **FIELDS)
    assert not seal_matches(KEY, seal, **{**FIELDS, **change})


def test_a_missing_seal_or_another_key_does_not_match() -> None:
    assert not seal_matches(KEY, None, **FIELDS)
    assert not seal_matches(b"other", compute_seal(KEY, **FIELDS), **FIELDS)
