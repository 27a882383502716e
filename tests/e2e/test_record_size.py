"""GIVEN a recurring action whose id is as long as a UUID (the shape most callers give), in the
default group, with a bounded rate whose next fire is parked between fires, WHEN it has fired
until its history is full THEN every write of its record from then on — the pump's launch, the
claim, the record of the fire — is billed on items of at most 1 KB by DynamoDB's rules (the
larger of the item before and after each write, as the table's stream shows them): one write
unit, not two (issue 51, item 3)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from tests.e2e.support import Stack, advance, now
from tickwork.adapters.dynamodb_sizes import item_size
from tickwork.domain.times import iso

_UNIT = 1024
_PERIOD = 1800  # beyond the horizon: each next fire parked (launchAt, parkShard), then pumped


def _writes(stack: Stack, action_id: str) -> list[dict[str, Any]]:
    """Every write of the action's record, as the table's stream holds it."""
    shard = stack.local._actions_table().stream_shard
    return [
        r.record["dynamodb"]
        for r in shard.items
        if r.record["dynamodb"]["Keys"]["id"]["S"] == action_id
    ]


def test_a_recurring_record_at_full_history_takes_one_write_unit_a_write(stack: Stack) -> None:
    action_id = str(uuid.UUID(int=0xFFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF))  # 36 characters
    stack.start(
        {
            "id": action_id,
            "rate": f"rate({_PERIOD} seconds)",
            "startTime": iso(now() + timedelta(seconds=_PERIOD)),
            "repeat": True,
            "executionRemainder": 1000,
        }
    )
    stack.wait_record(action_id, lambda a: a.execution_time is not None)
    limit = stack.deps.settings.history_limit
    for fired in range(1, limit + 3):
        advance(_PERIOD)
        stack.wait_record(action_id, lambda a, n=fired: len(a.history) >= min(n, limit))
    full = [
        w
        for w in _writes(stack, action_id)
        if len(w.get("NewImage", {}).get("history", {}).get("L", [])) == limit
    ]
    statuses = {w["NewImage"]["status"]["S"] for w in full}
    assert {"PENDING", "IN_PROGRESS"} <= statuses and len(full) >= 4, statuses
    billed = [max(item_size(w["NewImage"]), item_size(w.get("OldImage", {}))) for w in full]
    assert max(billed) <= _UNIT, billed
