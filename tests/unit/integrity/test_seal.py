"""GIVEN a sealed action WHEN any field that decides what a fire does changes THEN the seal no
longer matches; with the same fields and key it always does. A seal written by the previous
version still holds, but cannot vouch for the fields it did not cover."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import replace

import pytest

from tickwork.integrity.canonical import canonical_json
from tickwork.integrity.seal import SealedFields, compute_seal, seal_matches

KEY = b"seal-key"
FIELDS = SealedFields(
    action_id="hook:1",
    action="HTTP_REQUEST",
    data={"url": "https://example.com/hook", "method": "POST"},
    metadata={"team": "billing"},
    schedule={"kind": "once", "anchor": "2026-03-07T12:00:00Z"},
)


def test_the_seal_matches_its_fields() -> None:
    seal = compute_seal(KEY, FIELDS)
    assert seal.startswith("v6=")
    assert len(seal) == len("v6=") + 32  # the HMAC cut to 128 bits: each write pays per byte
    assert seal_matches(KEY, seal, FIELDS)


def _v3_seal(fields: SealedFields) -> str:
    """A seal as version 3 wrote it: every field (version 2's and onUnknownOutcome), uncut."""
    return _whole_seal("v3", fields, ("on_unknown_outcome",))


def test_a_v3_seal_still_holds_and_breaks_on_any_change() -> None:
    assert seal_matches(KEY, _v3_seal(FIELDS), FIELDS)
    assert not seal_matches(KEY, _v3_seal(FIELDS), replace(FIELDS, metadata={"team": "x"}))


def test_a_seal_cut_shorter_or_relabelled_does_not_match() -> None:
    seal = compute_seal(KEY, FIELDS)
    assert not seal_matches(KEY, seal[:-1], FIELDS)
    assert not seal_matches(KEY, "v3=" + seal.split("=", 1)[1], FIELDS)


@pytest.mark.parametrize(
    "change",
    [
        {"action_id": "hook:2"},
        {"action": "SEND_NOTIFICATION"},
        {"data": {"url": "http://169.254.169.254/latest/meta-data/", "method": "POST"}},
        {"metadata": {"team": "attacker"}},
        {"schedule": {"kind": "once", "anchor": "2026-03-07T12:00:01Z"}},
        {"catch_up": {"policy": "ALL", "thresholdSeconds": 60.0, "windowSeconds": 2592000}},
        {"on_failure": "CONTINUE"},
        {"role_arn": "arn:aws:iam::123456789012:role/tickwork-targets/admin"},
        {"on_unknown_outcome": "RETRY"},
        {"occurrence_changes": [["2026-03-07T13:00:00.000Z", None]]},
    ],
    ids=lambda change: next(iter(change)),
)
def test_changing_a_sealed_field_breaks_the_seal(change) -> None:
    seal = compute_seal(KEY, FIELDS)
    assert not seal_matches(KEY, seal, replace(FIELDS, **change))


def test_a_missing_seal_or_another_key_does_not_match() -> None:
    assert not seal_matches(KEY, None, FIELDS)
    assert not seal_matches(KEY, "garbage", FIELDS)
    assert not seal_matches(b"other", compute_seal(KEY, FIELDS), FIELDS)


def _v1_seal(fields: SealedFields) -> str:
    """A seal as the previous version wrote it: id, action, data, metadata and schedule."""
    covered = {
        "id": fields.action_id,
        "action": fields.action,
        "data": fields.data,
        "metadata": fields.metadata,
        "schedule": fields.schedule,
    }
    text = json.dumps(covered, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "v1=" + hmac.new(KEY, text.encode(), hashlib.sha256).hexdigest()


def test_a_record_sealed_by_the_previous_version_still_holds() -> None:
    assert seal_matches(KEY, _v1_seal(FIELDS), FIELDS)


@pytest.mark.parametrize(
    "change",
    [
        {"role_arn": "arn:aws:iam::123456789012:role/tickwork-targets/admin"},
        {"on_failure": "PAUSE"},
        {"catch_up": {"policy": "SKIP", "thresholdSeconds": 60.0}},
        {"on_unknown_outcome": "RETRY"},
        {"occurrence_changes": [["2026-03-07T13:00:00.000Z", None]]},
    ],
    ids=lambda change: next(iter(change)),
)
def test_a_previous_version_seal_cannot_vouch_for_a_field_it_never_covered(change) -> None:
    """A role, or a policy, added by hand to a v1-sealed record breaks its seal."""
    assert not seal_matches(KEY, _v1_seal(FIELDS), replace(FIELDS, **change))


def _v2_seal(fields: SealedFields) -> str:
    """A seal as version 2 wrote it: every field but onUnknownOutcome."""
    return _whole_seal("v2", fields)


def _whole_seal(version: str, fields: SealedFields, newer: tuple[str, ...] = ()) -> str:
    """A seal over version 2's fields (and ``newer`` ones), the whole HMAC, as written."""
    names = ("catch_up", "on_failure", "role_arn", *newer)
    covered = {
        "id": fields.action_id,
        "action": fields.action,
        "data": fields.data,
        "metadata": fields.metadata,
        "schedule": fields.schedule,
        **{name: getattr(fields, name) for name in names},
    }
    return f"{version}=" + hmac.new(KEY, canonical_json(covered), hashlib.sha256).hexdigest()


def test_a_v2_seal_holds_until_on_unknown_outcome_is_set_by_hand() -> None:
    policy = replace(FIELDS, on_failure="PAUSE")
    assert seal_matches(KEY, _v2_seal(policy), policy)
    assert not seal_matches(KEY, _v2_seal(policy), replace(policy, on_unknown_outcome="RETRY"))


def _v4_seal(fields: SealedFields) -> str:
    """A seal as version 4 wrote it: version 3's fields, the HMAC cut to 32 hex digits."""
    whole = _whole_seal("v4", fields, ("on_unknown_outcome",))
    return whole[: len("v4=") + 32]


@pytest.mark.parametrize(
    "changes",
    [
        [["2026-03-07T13:00:00.000Z", None]],  # a skip added by hand would silence a fire
        [["2026-03-07T13:00:00.000Z", "2026-03-07T12:00:01.000Z"]],  # a move would fire early
    ],
    ids=["skip", "move"],
)
def test_a_v4_seal_holds_until_an_occurrence_is_skipped_or_moved_by_hand(changes) -> None:
    assert seal_matches(KEY, _v4_seal(FIELDS), FIELDS)
    assert not seal_matches(KEY, _v4_seal(FIELDS), replace(FIELDS, occurrence_changes=changes))
    moved = replace(FIELDS, occurrence_changes=changes)
    assert seal_matches(KEY, compute_seal(KEY, moved), moved)
