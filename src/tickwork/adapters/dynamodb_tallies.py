"""FireTallies over the actions table: how many fires were recorded on time, late or failed,
by hour and by minute, in all and per group, in one counter item an hour,
``#fires#<scope>#h<hour>`` (dynamodb_counts): a field per kind for the hour (``onTime``) and one
per kind and minute of it (``onTime@07``), so /stats reads a bounded number of small items and
a fold of sparse fires writes one item a scope, not one a minute. They are added by the count
function's fold of the writes that record the fires, exactly once (dynamodb_stream_counts).

The release before kept each minute in an item of its own (``#fires#<scope>#m<minute>``); those
are not read: a per-minute view of a time before the upgrade shows no fires, its hour's totals
do."""

from __future__ import annotations

from collections import Counter

from tickwork.adapters.clients import OnTable
from tickwork.adapters.dynamodb_counts import COUNTER_KEYS, MINUTE_MARK, fire_counter_id
from tickwork.adapters.dynamodb_reads import items_by_id

__all__ = ["DynamoDBFireTallies"]


class DynamoDBFireTallies(OnTable):
    def read(
        self, group: str | None, hourly: bool, first: int, last: int
    ) -> dict[int, dict[str, int]]:
        """The totals of each hour (``hourly``) or minute since the epoch from ``first`` to
        ``last`` that has any, by kind."""
        if last < first:
            return {}
        hours = range(first, last + 1) if hourly else range(first // 60, last // 60 + 1)
        ids = {fire_counter_id(group, True, hour): hour for hour in hours}
        found: dict[int, Counter[str]] = {}
        for item in items_by_id(self._table, list(ids)):
            hour = ids[str(item["id"])]
            for name, value in item.items():
                if name in COUNTER_KEYS:
                    continue
                kind, mark, minute = str(name).partition(MINUTE_MARK)
                if hourly and not mark:
                    found.setdefault(hour, Counter())[kind] += int(str(value))
                elif not hourly and mark:
                    number = hour * 60 + int(minute)
                    if first <= number <= last:
                        found.setdefault(number, Counter())[kind] += int(str(value))
        return {number: dict(kinds) for number, kinds in sorted(found.items()) if kinds}
