"""ParkedFires over the actions table: the fires whose execution is due for launch, from the
sparse ``Parked`` index, and the pump's watermark (``#pump``) that keeps its reads short.

A parked record carries ``parkShard`` = ``<hour of its launch moment>#<0-15>`` and ``launchAt``
(dynamodb_record.py). A read looks at the hours from the watermark — the earliest hour that may
still hold a fire due for launch — to the hour of ``until``, every shard, so it grows with the
fires launched, never with the actions stored. The watermark then moves to the earliest hour
that still held a due fire (fires the caller could not launch are read again next time), else
to the hour of five minutes ago: a fire parked "due now" by a function whose clock lags by less
is still found.
"""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime
from typing import Any

from tickwork.adapters.clients import OnTable
from tickwork.adapters.dynamodb_reads import query_pages
from tickwork.adapters.record_keys import PARK_SHARDS, PUMP_ITEM_ID, park_bucket, park_shard
from tickwork.domain.times import to_epoch_ms

__all__ = ["DynamoDBParkedFires"]

# With no watermark yet (a new stack), the pump looks this many hours back before the hour of
# its first run. Nothing is parked to launch in the past: a fire is parked before its launch
# moment, or again due now, and a new stack's pump runs within a minute of its deployment. A
# parked fire an hour older than that is still launched: the reconciler starts a parked fire
# the pump missed. (It was 24: 400 queries in every new stack's first run.)
_FIRST_LOOKBACK = 1
# The watermark stays this far behind the pump's now.
_SKEW_MS = 300_000


class DynamoDBParkedFires(OnTable):
    def due(self, until: datetime, limit: int = 1000) -> list[str]:
        """Ids of the parked fires to launch by ``until``, earliest launch first."""
        return [action_id for _, action_id in self.due_moments(until, limit)]

    @property
    def shards(self) -> range:
        return range(PARK_SHARDS)

    def due_moments(
        self, until: datetime, limit: int = 1000, shard: int | None = None
    ) -> list[tuple[int, str]]:
        """``due``, each id with its launch moment (ms since the epoch); ``shard``: in that
        shard of the index only, the watermark read but left where it is (a pump worker's)."""
        until_ms = to_epoch_ms(until)
        last = park_bucket(until_ms)
        stored = self._table.get_item(Key={"id": PUMP_ITEM_ID}, ConsistentRead=True).get("Item")
        first = int(str(stored["parkedFrom"])) if stored else last - _FIRST_LOOKBACK
        found: list[tuple[int, str]] = []
        earliest: int | None = None
        for bucket in range(first, last + 1):
            for each in self.shards if shard is None else (shard,):
                for item in self._parked_in(park_shard(bucket, each), until_ms, limit):
                    found.append((int(str(item["launchAt"])), str(item["id"])))
                    earliest = bucket if earliest is None else earliest
            if len(found) >= limit:
                break
        settled = park_bucket(until_ms - _SKEW_MS)
        mark = max(min(earliest, settled) if earliest is not None else settled, first)
        if shard is None and (stored is None or mark != first):  # only when it moves
            self._table.put_item(Item={"id": PUMP_ITEM_ID, "parkedFrom": mark})
        found.sort()
        return found[:limit]

    def nothing_due_until(self, until: datetime) -> None:
        """Move the watermark as a ``due(until)`` that found nothing would, without its reads:
        for a caller that knows no fire is parked to launch by ``until`` (the local stack's
        virtual time, leaving out the pump runs that would have found nothing)."""
        mark = park_bucket(to_epoch_ms(until) - _SKEW_MS)
        conflict = self._table.meta.client.exceptions.ConditionalCheckFailedException
        with suppress(conflict):  # one write, only forward: a watermark at or past it stays
            self._table.put_item(
                Item={"id": PUMP_ITEM_ID, "parkedFrom": mark},
                ConditionExpression="attribute_not_exists(parkedFrom) OR parkedFrom < :mark",
                ExpressionAttributeValues={":mark": mark},
            )

    def _parked_in(self, key: str, until_ms: int, want: int) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "IndexName": "Parked",
            "KeyConditionExpression": "parkShard = :k AND launchAt <= :until",
            "ExpressionAttributeValues": {":k": key, ":until": until_ms},
        }
        found: list[dict[str, Any]] = []
        for items in query_pages(self._table, kwargs):
            found += items
            if len(found) >= want:
                break
        return found
