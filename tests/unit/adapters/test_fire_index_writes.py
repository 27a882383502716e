"""GIVEN the table's indexes as template.yaml declares them WHEN a fire is claimed, noted failing,
or handed over THEN no index entry is written (IN_PROGRESS keeps its PENDING entry; the
name-ordered indexes project nothing a claim changes); and recording the fire rewrites only the
ByStatus entry of its next fire time — checked on the real item codec for generated records,
ids and groups chosen to collide with the stack's own names."""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.fakes.rate_records import execution_arn, waiting_on_a_rate
from tickwork.adapters.dynamodb_record import to_item
from tickwork.domain.action import Action, Limits, Occurrence, Status
from tickwork.domain.fire import Outcome

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from benchkit.indexes import index_write_units, table_indexes

KEYS, SPECS = table_indexes()
IDS = st.sampled_from(["a", "b-1764230000-0123456789ab", "x-1a2b3c4d-g1-o1", "ids", "#x"[1:]])
GROUPS = st.sampled_from(["default", "ids", "attention", "PENDING", "manual"])


def _pending(action_id: str, group: str, period: int, occurrence: int) -> Action:
    return waiting_on_a_rate(period, occurrence, action_id=action_id, group=group)


@settings(max_examples=60, deadline=None)
@given(
    action_id=IDS,
    group=GROUPS,
    period=st.sampled_from([2, 10, 60, 86_400]),
    occurrence=st.integers(min_value=1, max_value=10_000),
)
def test_a_claim_writes_no_index_entry_and_a_record_only_the_next_fires(
    action_id: str, group: str, period: int, occurrence: int
) -> None:
    pending = _pending(action_id, group, period, occurrence)
    assert pending.execution_arn is not None and pending.execution_time is not None
    now = pending.execution_time + timedelta(milliseconds=5)
    claimed = pending.claimed(now, pending.execution_arn, 20)
    noted = claimed.noted_failure(now, "TransientFulfillmentError: 503", 1)

    # THEN a claim, and an attempt's error noted, touch no index
    assert index_write_units(to_item(pending), to_item(claimed), SPECS, KEYS) == {}
    assert index_write_units(to_item(claimed), to_item(noted), SPECS, KEYS) == {}

    # AND recording it moves only its ByStatus entry to the next fire time
    ran = Occurrence(occurrence, pending.execution_time, now, 1, Outcome.FIRED)
    following = pending.execution_time + timedelta(seconds=period)
    recorded = claimed.fired(now, ran, following, {}, Limits()).planned(
        execution_arn(action_id, occurrence + 1)
    )
    assert set(index_write_units(to_item(claimed), to_item(recorded), SPECS, KEYS)) == {"ByStatus"}


def test_a_claim_before_this_layout_moves_its_entry_back_once() -> None:
    """A record claimed by an earlier version sits in IN_PROGRESS's own partition: recording it
    moves it back to PENDING's (queries read both until then)."""
    pending = _pending("a", "default", 60, 1)
    assert pending.execution_arn is not None and pending.execution_time is not None
    claimed = pending.claimed(pending.execution_time, pending.execution_arn, 20)
    old = {**to_item(claimed), "statusShard": "IN_PROGRESS#" + to_item(claimed)["statusShard"][-1]}
    back = replace(claimed, version=claimed.version + 1, claimed_by=None, status=Status.PENDING)
    assert index_write_units(old, to_item(back), SPECS, KEYS) == {"ByStatus": 2}
