"""GIVEN the table as the local stack's virtual time glances at it WHEN fires are parked near
or far, launched or not THEN the pump is due only for what it has still to launch: a fire parked
far that its shard's watermark passed was launched without a write, and is no longer its."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tickwork.adapters.record_keys import PUMP_ITEM_ID, park_shard_of
from tickwork_local.useful_runs import glance_at

FIRE_MS = 1_800_000_000_000
LAUNCH_MS = FIRE_MS - 900_000


def _parked(action_id: str, near: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": action_id,
        "status": "PENDING",
        "executionTime": str(FIRE_MS),
        "launchAt": str(LAUNCH_MS),
    }
    if near:
        item["parkShard"] = "h#0"
    return item


def _pump(marks: dict[int, int]) -> dict[str, Any]:
    return {"id": PUMP_ITEM_ID, "launchedTo": {str(k): {"N": str(m)} for k, m in marks.items()}}


# ids shaped like the stack's own names and items (a "#" id is never a record)
IDS = st.sampled_from(["a", "b-1772888400-0", "f:0001", "x" * 200, "#pump-like"])


@given(IDS, st.booleans(), st.integers(-1, 2) | st.none())
def test_the_pump_is_due_for_a_parked_fire_until_a_watermark_passes_a_far_one(
    action_id: str, near: bool, mark_offset: int | None
) -> None:
    # GIVEN the fire's shard's watermark below, at or past its fire time (or none yet)
    shard = park_shard_of(action_id)
    marks = {} if mark_offset is None else {shard: FIRE_MS + mark_offset}
    items = [_parked(action_id, near), _pump(marks)]

    glance = glance_at(items, set)

    passed = mark_offset is not None and mark_offset > 0  # its fire time below the mark
    expected = [] if passed and not near else [LAUNCH_MS / 1000]
    assert glance.launches == expected
    assert glance.unnoted == [FIRE_MS / 1000]  # the watchdog's moment stays either way
    assert glance.waiting == []
