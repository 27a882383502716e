"""GIVEN the pump's watermark (``#pump``) WHEN runs read the parked fires at any moment of an
hour, its first minutes among them THEN the watermark is written only when it moves: a run
that finds it where it would put it writes nothing (each write is billed, and a pump runs every
minute)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tickwork.adapters.dynamodb_parked import DynamoDBParkedFires
from tickwork.adapters.record_keys import PUMP_ITEM_ID

HOUR = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)


class _Counting:
    """The table as the pump sees it, its puts of the watermark counted."""

    def __init__(self, table: Any) -> None:
        self._table = table
        self.watermark_puts = 0

    def update_item(self, **kwargs: Any) -> Any:
        moves = "parkedFrom" in kwargs.get("UpdateExpression", "")
        self.watermark_puts += kwargs["Key"]["id"] == PUMP_ITEM_ID and moves
        return self._table.update_item(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    runs=st.lists(
        # seconds into the run: the first minutes of hours among them
        st.one_of(st.integers(0, 3 * 3600), st.sampled_from([0, 1, 299, 300, 301, 3600, 3899])),
        min_size=1,
        max_size=8,
    ).map(sorted),
    day=st.integers(0, 10_000),
)
def test_the_watermark_is_written_only_when_it_moves(
    table_name: str, runs: list[int], day: int
) -> None:
    table = _Counting(boto3.resource("dynamodb").Table(table_name))
    table._table.delete_item(Key={"id": PUMP_ITEM_ID})
    parked = DynamoDBParkedFires(table_name, table=table)  # type: ignore[arg-type]
    start = HOUR + timedelta(days=day)
    marks = []
    for at in runs:
        parked.due(start + timedelta(seconds=at))
        stored = table._table.get_item(Key={"id": PUMP_ITEM_ID})["Item"]["parkedFrom"]
        marks.append(int(stored))
    assert marks == sorted(marks)  # it only moves forward
    assert table.watermark_puts == len(set(marks))  # a put each time it moved, no other
