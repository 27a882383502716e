"""FireTallies over the actions table: how many fires were recorded on time, late or failed,
by minute and by hour, in all and per group, in counter items ``#fires#<scope>#m<minute>`` and
``#fires#<scope>#h<hour>`` (dynamodb_counts), so /stats reads a bounded number of small items.
They are added by the count function's fold of the writes that record the fires, exactly once
(dynamodb_stream_counts)."""

from __future__ import annotations

from tickwork.adapters.clients import OnTable
from tickwork.adapters.dynamodb_counts import COUNTER_KEYS, fire_counter_id
from tickwork.adapters.dynamodb_reads import items_by_id

__all__ = ["DynamoDBFireTallies"]


class DynamoDBFireTallies(OnTable):
    def read(
        self, group: str | None, hourly: bool, first: int, last: int
    ) -> dict[int, dict[str, int]]:
        ids = {fire_counter_id(group, hourly, n): n for n in range(first, last + 1)}
        return {
            ids[str(item["id"])]: {k: int(str(v)) for k, v in item.items() if k not in COUNTER_KEYS}
            for item in items_by_id(self._table, list(ids))
        }
