"""ActionRepository over one DynamoDB table, with version-fenced writes.

Reads go through the table's indexes (see dynamodb_record.py for the item and its keys), each
split over ``SHARDS`` partitions so no key gets hot; a page merges the shards. By status: in
order of next fire (ByStatus). By group or id prefix: in id order (ByGroup, ById). Needing
attention: in id order (NeedsAttention). Everything: in id order (ById). Parked fires due for
launch: by launch time (Parked, time-bucketed; see ``parked_due``). Nothing scans the table.
"""

from __future__ import annotations

import heapq
import logging
import random
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from itertools import islice
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from tickwork.adapters.clients import AwsClients, OnTable
from tickwork.adapters.dynamodb_counts import (
    ATTENTION,
    CountedAs,
    counted_as,
    counter_ids,
    deltas,
    fire_counter_id,
    fire_counter_ids,
)
from tickwork.adapters.dynamodb_record import (
    PARK_SHARDS,
    PUMP_ITEM_ID,
    SHARDS,
    from_item,
    park_bucket,
    park_shard,
    to_item,
)
from tickwork.domain import page_cursor
from tickwork.domain.action import Action, Status
from tickwork.domain.errors import ActionConflict
from tickwork.domain.fire_tally import FireKind
from tickwork.domain.page_cursor import Position
from tickwork.domain.selection import Selection
from tickwork.domain.times import iso, to_epoch_ms

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = ["DynamoDBActionRepository"]

_ID_AFTER = "\x01"  # ids use no character below "+": after + this sorts right after "after"
_ID_END = "\x7f"  # above every character an id may use: prefix + this ends the prefix's range
log = logging.getLogger("tickwork")

_BATCH_GET = 100
_TRANSACTION_ATTEMPTS = 5
_REMEMBERED = 50_000  # (id, version) pairs kept; beyond, the cache starts again
# With no watermark yet (a new stack), the pump looks this many buckets back. Nothing is parked
# to launch in the past: a fire is parked before its launch moment, or again due now.
_FIRST_LOOKBACK = 24
# The watermark stays this far behind the pump's now: a fire parked "due now" by a function
# whose clock lags by less is still read.
_SKEW_MS = 300_000


class DynamoDBActionRepository(OnTable):
    """``expiry_days``: how long finished records live (``FinishedTtlDays``): a count reads the
    counters of the days they may expire on (dynamodb_counts)."""

    def __init__(
        self,
        table_name: str,
        table: Table | None = None,
        clients: AwsClients | None = None,
        expiry_days: int = 30,
    ) -> None:
        super().__init__(table_name, table, clients)
        self._expiry_days = expiry_days
        # What each (id, version, createdAt) read or written here counts as: a version's item
        # never changes, so a save knows what it moves the action from without a read.
        self._counted: dict[tuple[str, int, str], CountedAs | None] = {}

    def get(self, action_id: str) -> Action | None:
        item = self._table.get_item(Key={"id": action_id}, ConsistentRead=True).get("Item")
        return self._remembered(item) if item else None

    def create(self, action: Action) -> None:
        self._write(action, None)

    def save(self, action: Action, expected_version: int) -> None:
        self._write(action, expected_version)

    def _write(self, action: Action, expected_version: int | None) -> None:
        """Put the record, fenced on ``expected_version`` (None: it must not exist); when what
        it counts as changes, in one transaction with the counters' ADDs."""
        item = to_item(action)
        for attempt in range(_TRANSACTION_ATTEMPTS):
            before = None if expected_version is None else self._before(action, expected_version)
            changes = deltas(before, counted_as(item))
            if expected_version is None:
                condition, values = "attribute_not_exists(id)", {}
            else:
                condition, values = "version = :expected", {":expected": expected_version}
            try:
                if changes:
                    self._transact(item, condition, values, changes)
                else:
                    self._put(item, condition, values)
            except _Contended:
                time.sleep(random.uniform(0, 0.02 * (attempt + 1)))
                continue
            self._remember(item)
            return
        raise ActionConflict(action.id, "its counters stayed contended: try again")

    def _put(self, item: dict[str, Any], condition: str, values: dict[str, Any]) -> None:
        kwargs: dict[str, Any] = {"Item": item, "ConditionExpression": condition}
        if values:
            kwargs["ExpressionAttributeValues"] = values
        try:
            self._table.put_item(**kwargs)
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise ActionConflict(
                    str(item["id"]), "the record changed since it was read"
                ) from error
            raise

    def _transact(
        self,
        item: dict[str, Any],
        condition: str,
        values: dict[str, Any],
        changes: dict[str, dict[str, int]],
        delete: bool = False,
    ) -> None:
        # The resource's client takes and gives plain values (boto3 serializes them).
        first: dict[str, Any] = {"TableName": self._name, "ConditionExpression": condition}
        if values:
            first["ExpressionAttributeValues"] = values
        first.update({"Key": {"id": item["id"]}} if delete else {"Item": item})
        writes: list[Any] = [{"Delete" if delete else "Put": first}]
        for counter, fields in sorted(changes.items()):
            names = {f"#f{n}": name for n, name in enumerate(fields)}
            writes.append(
                {
                    "Update": {
                        "TableName": self._name,
                        "Key": {"id": counter},
                        "UpdateExpression": "ADD "
                        + ", ".join(f"#f{n} :v{n}" for n in range(len(fields))),
                        "ExpressionAttributeNames": names,
                        "ExpressionAttributeValues": {
                            f":v{n}": value for n, value in enumerate(fields.values())
                        },
                    }
                }
            )
        try:
            self._table.meta.client.transact_write_items(TransactItems=writes)
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            reasons = [r.get("Code") for r in error.response.get("CancellationReasons", [])]
            if reasons and reasons[0] == "ConditionalCheckFailed":
                raise ActionConflict(
                    str(item["id"]), "the record changed since it was read"
                ) from error
            if "TransactionConflict" in reasons or not reasons:
                raise _Contended() from error
            raise

    def _before(self, action: Action, version: int) -> CountedAs | None:
        """What the stored version ``version`` of the action counts as: remembered, or read."""
        key = (action.id, version, iso(action.created_at))
        if key in self._counted:
            return self._counted[key]
        item = self._table.get_item(Key={"id": action.id}, ConsistentRead=True).get("Item")
        if item is None or int(str(item["version"])) != version:
            raise ActionConflict(action.id, "the record changed since it was read")
        self._remember(item)
        return counted_as(item)

    def _remembered(self, item: dict[str, Any]) -> Action:
        self._remember(item)
        return from_item(item)

    def _remember(self, item: dict[str, Any]) -> None:
        if len(self._counted) >= _REMEMBERED:
            self._counted.clear()
        key = (str(item["id"]), int(str(item["version"])), str(item["createdAt"]))
        self._counted[key] = counted_as(item)

    def delete(self, action_id: str) -> None:
        """Delete the record and take it off its counters (a purge)."""
        for attempt in range(_TRANSACTION_ATTEMPTS):
            item = self._table.get_item(Key={"id": action_id}, ConsistentRead=True).get("Item")
            if item is None:
                return
            changes = deltas(counted_as(item), None)
            try:
                self._transact(item, "version = :v", {":v": item["version"]}, changes, delete=True)
            except (_Contended, ActionConflict):
                time.sleep(random.uniform(0, 0.02 * (attempt + 1)))
                continue
            return
        raise ActionConflict(action_id, "it kept changing while being deleted: try again")

    # --- in order of next fire ---------------------------------------------------------------
    def in_fire_order(
        self, status: Status | None = None, limit: int = 100, until: datetime | None = None
    ) -> list[Action]:
        """Actions by next fire time (due by ``until``, when given): one status through the
        ByStatus index (all its shards, merged), or every action (loaded by id)."""
        if status is None:
            ids, _ = self._ids(Selection(), limit, None)
            actions = [a for a in self._load(ids) if until is None or _due(a, until)]
        else:
            last = None if until is None else to_epoch_ms(until)
            items = self._by_time(status, None, limit, last)
            actions = self._load([str(item["id"]) for item in items])
        actions.sort(key=lambda a: (a.execution_time is None, a.execution_time or 0, a.id))
        return actions[:limit]

    def page(
        self, selection: Selection, limit: int, cursor: str | None = None
    ) -> tuple[list[Action], str | None]:
        """One page and an opaque cursor for the next (None at the end).

        By status alone: by next fire time, then id. By group, prefix or attention: by id.
        Nothing selected: by id (the ById index, every shard).
        """
        by_id = selection.named or selection.attention or selection.status is None
        after = page_cursor.decode(cursor, in_fire_order=not by_id)
        if by_id or selection.status is None:
            ids, last = self._ids(selection, limit, after.action_id if after else None)
            return self._load(ids), last and page_cursor.encode(Position(last))
        items = self._by_time(selection.status, after, limit + 1)
        chosen = self._load([str(item["id"]) for item in items[:limit]])
        if len(items) <= limit:
            return chosen, None
        time, last_id = _position(items[limit - 1])
        return chosen, page_cursor.encode(Position(last_id, time))

    def _by_time(
        self, status: Status, after: Position | None, want: int, last: int | None = None
    ) -> list[dict[str, Any]]:
        """The first ``want`` index entries of ``status`` in fire order (after ``after``, up to
        ``last`` epoch ms): the shards merged as they are read, each read a few entries at a
        time, so a page reads about its own size plus a few per shard, not a page per shard."""
        step = _step(want)
        shards = (self._shard_in_order(f"{status}#{n}", after, step, last) for n in range(SHARDS))
        return list(islice(heapq.merge(*shards, key=_position), want))

    def _shard_in_order(
        self, shard: str, after: Position | None, step: int, last: int | None = None
    ) -> Iterator[dict[str, Any]]:
        """One ByStatus shard's entries in fire order from after ``after`` (and up to ``last``
        epoch ms), read ``step`` at a time as they are consumed: keys only (the index projects
        nothing else; pages load their records by key)."""
        kwargs: dict[str, Any] = {
            "IndexName": "ByStatus",
            "KeyConditionExpression": "statusShard = :shard",
            "ExpressionAttributeValues": {":shard": shard},
            "Limit": step,
        }
        low = after.fire_ms if after else None
        values = kwargs["ExpressionAttributeValues"]
        if low is not None and last is not None:
            kwargs["KeyConditionExpression"] += " AND executionTime BETWEEN :t AND :last"
            values.update({":t": low, ":last": last})
        elif low is not None:
            kwargs["KeyConditionExpression"] += " AND executionTime >= :t"
            values[":t"] = low
        elif last is not None:
            kwargs["KeyConditionExpression"] += " AND executionTime <= :last"
            values[":last"] = last
        for items in self._query_pages(kwargs):
            for item in items:
                if not after or _position(item) > (after.fire_ms or 0, after.action_id):
                    yield item

    def _query_pages(self, kwargs: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
        """The items of each page of one Query, a page read only when the one before is done."""
        while True:
            page = self._table.query(**kwargs)
            yield page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            kwargs = {**kwargs, "ExclusiveStartKey": page["LastEvaluatedKey"]}

    # --- by name (group, id prefix) and needing attention: in id order --------------------------
    def with_manual_fires(self, limit: int = 1000) -> list[Action]:
        ids: list[str] = []
        for shard in range(SHARDS):
            ids += [
                str(item["id"])
                for item in islice(
                    self._index_stream(
                        "ManualFires", "manualShard", f"manual#{shard}", None, None, None, limit
                    ),
                    limit,
                )
            ]
        return self._load(sorted(ids)[:limit])

    def count(self, selection: Selection) -> dict[str, int]:
        """Actions by status (and how many need attention), every status named. All, or a
        group: from the counter items (a bounded read, however many actions there are); by id
        prefix or need of attention: from their index."""
        if selection.prefix is None and not selection.attention:
            return self._counted_totals(selection)
        counts: Counter[str] = Counter({str(status): 0 for status in Status})
        attention = 0
        for index, key, value in self._shards(selection):
            items = self._index_stream(
                index, key, value, selection.prefix, None, selection.status, _ALL_AT_ONCE
            )
            for item in items:
                counts[str(item["status"])] += 1
                attention += "attentionShard" in item or selection.attention
        return {**counts, "NEEDS_ATTENTION": attention}

    def _counted_totals(self, selection: Selection) -> dict[str, int]:
        today = int(time.time()) // 86_400
        days = range(max(today, 1), today + self._expiry_days + 2)
        ids = counter_ids(selection.group, days, SHARDS)
        totals: Counter[str] = Counter()
        for item in self._items(ids):
            for name, value in item.items():
                if name != "id":
                    totals[name] += int(str(value))
        in_flight = self._in_flight(selection.group)
        totals[Status.PENDING] -= in_flight
        totals[Status.IN_PROGRESS] = in_flight
        counts = {str(status): max(0, totals[str(status)]) for status in Status}
        if selection.status is not None:
            counts = {
                name: value if name == selection.status else 0 for name, value in counts.items()
            }
        return {**counts, ATTENTION: max(0, totals[ATTENTION])}

    def _in_flight(self, group: str | None) -> int:
        """IN_PROGRESS actions (counted as PENDING by the counters): the fires in flight, a
        handful, from the status index."""
        ids = [
            str(item["id"])
            for shard in range(SHARDS)
            for item in self._shard_in_order(f"{Status.IN_PROGRESS}#{shard}", None, _ALL_AT_ONCE)
        ]
        if group is None:
            return len(ids)
        return sum(1 for action in self._load(ids) if action.group == group)

    def _items(self, ids: list[str]) -> list[dict[str, Any]]:
        """The items of ``ids`` that exist, in no order."""
        found: list[dict[str, Any]] = []
        client = self._table.meta.client
        for start in range(0, len(ids), _BATCH_GET):
            request: dict[str, Any] = {
                self._table.name: {
                    "Keys": [{"id": i} for i in ids[start : start + _BATCH_GET]],
                    "ConsistentRead": True,
                }
            }
            while request:
                answer = client.batch_get_item(RequestItems=request)
                found += answer["Responses"].get(self._table.name, [])
                request = answer.get("UnprocessedKeys") or {}
        return found

    def _ids(
        self, selection: Selection, limit: int, after: str | None
    ) -> tuple[list[str], str | None]:
        """The first ``limit`` ids of the selection after ``after``, and the cursor id when there
        are more: the shards merged in id order as they are read, a few entries at a time."""
        step = _step(limit + 1)
        shards = (
            (
                item
                for item in self._index_stream(
                    index, key, value, selection.prefix, after, selection.status, step
                )
                if not selection.attention or "attentionShard" in item or index == "NeedsAttention"
            )
            for index, key, value in self._shards(selection)
        )
        found = [
            str(item["id"])
            for item in islice(heapq.merge(*shards, key=lambda i: str(i["id"])), limit + 1)
        ]
        if len(found) <= limit:
            return found, None
        return found[:limit], found[limit - 1]

    def _shards(self, selection: Selection) -> list[tuple[str, str, str]]:
        if selection.group is not None:
            return [("ByGroup", "groupShard", f"{selection.group}#{n}") for n in range(SHARDS)]
        if selection.prefix is not None or not selection.attention:
            return [("ById", "idShard", f"ids#{n}") for n in range(SHARDS)]
        return [("NeedsAttention", "attentionShard", f"attention#{n}") for n in range(SHARDS)]

    def _index_stream(
        self,
        index: str,
        key: str,
        value: str,
        prefix: str | None,
        after: str | None,
        status: Status | None,
        step: int,
    ) -> Iterator[dict[str, Any]]:
        """One shard of a name-ordered index in id order, read ``step`` entries at a time as
        they are consumed (a status filter applies after each read, as DynamoDB's does)."""
        condition = "#k = :k"
        values: dict[str, Any] = {":k": value}
        low = prefix or ""
        if after is not None and after + _ID_AFTER > low:
            low = after + _ID_AFTER
        if prefix is not None:
            condition += " AND id BETWEEN :low AND :high"
            values.update({":low": low, ":high": prefix + _ID_END})
        elif low:
            condition += " AND id >= :low"
            values[":low"] = low
        kwargs: dict[str, Any] = {
            "IndexName": index,
            "KeyConditionExpression": condition,
            "ExpressionAttributeNames": {"#k": key},
            "ExpressionAttributeValues": values,
            "Limit": step,
        }
        if status is not None:
            kwargs["FilterExpression"] = "#s = :s"
            kwargs["ExpressionAttributeNames"]["#s"] = "status"
            kwargs["ExpressionAttributeValues"][":s"] = str(status)
        for items in self._query_pages(kwargs):
            yield from items

    def _load(self, ids: list[str]) -> list[Action]:
        """The records of ``ids``, in that order (one that vanished meanwhile is left out)."""
        items = {str(item["id"]): item for item in self._items(ids)}
        return [self._remembered(items[i]) for i in ids if i in items]

    # --- parked fires ----------------------------------------------------------------------------
    def parked_due(self, until: datetime, limit: int = 1000) -> list[str]:
        """Parked fires to launch by ``until``: the Parked index's buckets from the watermark
        (the earliest bucket that may still hold one) to ``until``'s, every shard. The
        watermark then moves to the earliest bucket that still held a due fire, else to the
        bucket of five minutes ago: fires the caller could not launch are read again next
        time."""
        until_ms = to_epoch_ms(until)
        last = park_bucket(until_ms)
        stored = self._table.get_item(Key={"id": PUMP_ITEM_ID}, ConsistentRead=True).get("Item")
        first = int(str(stored["parkedFrom"])) if stored else last - _FIRST_LOOKBACK
        found: list[tuple[int, str]] = []
        earliest: int | None = None
        for bucket in range(first, last + 1):
            for shard in range(PARK_SHARDS):
                for item in self._parked_in(park_shard(bucket, shard), until_ms, limit):
                    found.append((int(str(item["launchAt"])), str(item["id"])))
                    earliest = bucket if earliest is None else earliest
            if len(found) >= limit:
                break
        settled = park_bucket(until_ms - _SKEW_MS)
        mark = min(earliest, settled) if earliest is not None else settled
        if stored is None or mark != first:
            self._table.put_item(Item={"id": PUMP_ITEM_ID, "parkedFrom": max(mark, first)})
        found.sort()
        return [action_id for _, action_id in found[:limit]]

    def _parked_in(self, key: str, until_ms: int, want: int) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "IndexName": "Parked",
            "KeyConditionExpression": "parkShard = :k AND launchAt <= :until",
            "ExpressionAttributeValues": {":k": key, ":until": until_ms},
        }
        found: list[dict[str, Any]] = []
        for items in self._query_pages(kwargs):
            found += items
            if len(found) >= want:
                break
        return found

    # --- fire totals -----------------------------------------------------------------------------
    def tally_fire(self, group: str, at: datetime, kind: FireKind) -> None:
        minute = to_epoch_ms(at) // 60_000
        for counter in fire_counter_ids(group, minute):
            try:
                self._table.update_item(
                    Key={"id": counter},
                    UpdateExpression="ADD #k :one",
                    ExpressionAttributeNames={"#k": str(kind)},
                    ExpressionAttributeValues={":one": 1},
                )
            except ClientError:
                log.warning("fire not tallied in %s", counter, exc_info=True)

    def fire_tallies(
        self, group: str | None, hourly: bool, first: int, last: int
    ) -> dict[int, dict[str, int]]:
        ids = {fire_counter_id(group, hourly, n): n for n in range(first, last + 1)}
        return {
            ids[str(item["id"])]: {k: int(str(v)) for k, v in item.items() if k != "id"}
            for item in self._items(list(ids))
        }


_ALL_AT_ONCE = 1000  # entries per read when every entry of a shard is wanted


def _step(want: int) -> int:
    """Entries read from each of the 16 shards at a time to fill ``want`` merged: its share of
    them plus a margin (a shard holding more is read again)."""
    return -(-want // SHARDS) + 3


class _Contended(Exception):
    """A transaction met another on a counter item (TransactionConflict): try again."""


def _due(action: Action, until: datetime) -> bool:
    return action.execution_time is not None and action.execution_time <= until


def _position(item: dict[str, Any]) -> tuple[int, str]:
    """Where an index item stands in fire order: (next fire in epoch ms, id)."""
    return int(str(item.get("executionTime", 0))), str(item["id"])
