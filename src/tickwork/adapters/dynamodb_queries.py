"""ActionQueries over the actions table: pages, counts and the actions of one status in fire
order, each answered from an index (dynamodb_record.py names them), never a scan.

Every index is split over ``SHARDS`` partitions so no key gets hot; a read merges the shards as
it goes, taking a few entries of each at a time. By status: in order of next fire (ByStatus).
By group or id prefix: in id order (ByGroup, ById). Needing attention: in id order
(NeedsAttention). Everything: in id order (ById). Fires asked for by hand: ManualFires. A count
of all actions or of a group reads the counter items (dynamodb_counts), a bounded read.
"""

from __future__ import annotations

import heapq
import logging
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from itertools import islice
from typing import TYPE_CHECKING, Any

from tickwork.adapters.clients import AwsClients, OnTable
from tickwork.adapters.counted_memo import CountedMemo
from tickwork.adapters.dynamodb_counts import ATTENTION, COUNTER_KEYS, counter_ids
from tickwork.adapters.dynamodb_reads import items_by_id, query_pages
from tickwork.adapters.dynamodb_record import from_item
from tickwork.adapters.execution_refs import ExecutionRefs
from tickwork.adapters.record_keys import SHARDS, calendar_shard, status_partitions
from tickwork.clock import SystemClock
from tickwork.domain import page_cursor
from tickwork.domain.action import Action, Status
from tickwork.domain.errors import RecordFormatUnknown
from tickwork.domain.page_cursor import Position
from tickwork.domain.selection import Selection
from tickwork.domain.times import to_epoch_ms

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

    from tickwork.ports import Clock

log = logging.getLogger("tickwork")

__all__ = ["DynamoDBQueries"]

_ID_AFTER = "\x01"  # ids use no character below "+": after + this sorts right after "after"
_ID_END = "\x7f"  # above every character an id may use: prefix + this ends the prefix's range
_ALL_AT_ONCE = 1000  # entries per read when every entry of a shard is wanted
# Index entries a query by status looks at, at most, for records of another status sharing its
# partitions (claims among the fires due: a handful, but for a backlog after an outage)
_MOST_EXAMINED = 5000
_CLAIM_SKEW = timedelta(seconds=5)  # (the entries due by then: a handful, and those in flight)
_DAY_SECONDS = 86_400


class DynamoDBQueries(OnTable):
    """``expiry_days``: how long finished records live (``FinishedTtlDays``): a count reads the
    counters of the days they may expire on (dynamodb_counts)."""

    def __init__(
        self,
        table_name: str,
        table: Table | None = None,
        clients: AwsClients | None = None,
        expiry_days: int = 30,
        clock: Clock | None = None,
        memo: CountedMemo | None = None,
        refs: ExecutionRefs | None = None,
    ) -> None:
        super().__init__(table_name, table, clients)
        self._expiry_days = expiry_days
        self._clock = clock or SystemClock()
        self._memo = memo or CountedMemo()
        self._refs = refs

    # --- in order of next fire -------------------------------------------------------------
    def in_fire_order(
        self, status: Status, limit: int = 100, until: datetime | None = None
    ) -> list[Action]:
        """The actions of ``status`` by next fire time (due by ``until``, when given): the
        ByStatus index's shards, merged."""
        last = None if until is None else to_epoch_ms(until)
        return [action for _, action in self._by_time(status, None, limit, last)[0]]

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
            chosen, last = self._named(selection, limit, after.action_id if after else None)
            return chosen, last and page_cursor.encode(Position(last))
        found, stopped = self._by_time(selection.status, after, limit + 1)
        chosen = [action for _, action in found[:limit]]
        if len(found) > limit:
            stopped = found[limit - 1][0]
        if stopped is None:
            return chosen, None
        time, last_id = stopped  # (a short page, when the examining stopped: more may follow)
        return chosen, page_cursor.encode(Position(last_id, time))

    def _by_time(
        self, status: Status, after: Position | None, want: int, last: int | None = None
    ) -> tuple[list[tuple[tuple[int, str], Action]], tuple[int, str] | None]:
        """The first ``want`` actions of ``status`` in fire order (after ``after``, up to
        ``last`` epoch ms), each with its index position: the shards merged as they are read,
        each read a few entries at a time, so a page reads about its own size plus a few per
        shard, not a page per shard. The records are loaded and their status checked: a claimed
        fire (IN_PROGRESS) is indexed with PENDING's (``record_keys.indexed_status``), so a
        query of either pays the read of the other's records, not the fire its index write.
        With them, where it stopped when it examined as many entries as it may (more may
        follow), else None."""
        if status is Status.IN_PROGRESS and last is None:
            # a fire is claimed at or after its time (the margin: clocks a little apart)
            last = to_epoch_ms(self._clock.now() + _CLAIM_SKEW)
        step = _step(want)
        entries = heapq.merge(
            *(
                self._shard_in_order(f"{partition}#{n}", after, step, last)
                for partition in status_partitions(status)
                for n in range(SHARDS)
            ),
            key=_position,
        )
        found: list[tuple[tuple[int, str], Action]] = []
        examined, most = 0, max(_MOST_EXAMINED, 10 * want)
        stopped: tuple[int, str] | None = None
        while len(found) < want:
            if examined >= most:
                break
            chunk = list(islice(entries, min(want - len(found) + step, most - examined)))
            examined += len(chunk)
            if not chunk:
                break
            stopped = _position(chunk[-1]) if examined >= most else None
            loaded = {a.id: a for a in self._load([str(item["id"]) for item in chunk])}
            for item in chunk:
                action = loaded.get(str(item["id"]))
                if action is not None and action.status == status:
                    found.append((_position(item), action))
        return found[:want], (stopped if len(found) < want else None)

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
        for items in query_pages(self._table, kwargs):
            for item in items:
                if not after or _position(item) > (after.fire_ms or 0, after.action_id):
                    yield item

    # --- by name (group, id prefix), needing attention, asked for by hand: in id order ---------
    def with_manual_fires(self, limit: int = 1000) -> list[Action]:
        shards = (
            self._index_stream("ManualFires", "manualShard", f"manual#{n}", None, None, limit)
            for n in range(SHARDS)
        )
        ids = [str(item["id"]) for shard in shards for item in islice(shard, limit)]
        return self._load(sorted(ids)[:limit])

    def naming_calendar(self, name: str) -> list[Action]:
        shards = (
            self._index_stream(
                "ByCalendar", "calendarShard", calendar_shard(name, n), None, None, 1000
            )
            for n in range(SHARDS)
        )
        return self._load(sorted(str(item["id"]) for shard in shards for item in shard))

    def _named(
        self, selection: Selection, limit: int, after: str | None
    ) -> tuple[list[Action], str | None]:
        """The first ``limit`` actions of the selection after the id ``after``, and the cursor
        id when there are more: the shards merged in id order as they are read, a few entries
        at a time, their records loaded (and, for a status, checked: the name-ordered indexes
        project no status, which a claim or a record would rewrite)."""
        step = _step(limit + 1)
        shards = (
            (
                item
                for item in self._index_stream(index, key, value, selection.prefix, after, step)
                if not selection.attention or "attentionShard" in item or index == "NeedsAttention"
            )
            for index, key, value in _shards(selection)
        )
        merged = heapq.merge(*shards, key=lambda i: str(i["id"]))
        found: list[Action] = []
        while len(found) <= limit:
            chunk = [str(item["id"]) for item in islice(merged, limit + 1 - len(found))]
            if not chunk:
                break
            found += [
                a
                for a in self._load(chunk)
                if selection.status is None or a.status == selection.status
            ]
        if len(found) <= limit:
            return found, None
        return found[:limit], found[limit - 1].id

    def _index_stream(
        self,
        index: str,
        key: str,
        value: str,
        prefix: str | None,
        after: str | None,
        step: int,
    ) -> Iterator[dict[str, Any]]:
        """One shard of a name-ordered index in id order, read ``step`` entries at a time as
        they are consumed."""
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
        for items in query_pages(self._table, kwargs):
            yield from items

    # --- counts ------------------------------------------------------------------------------
    def count(self, selection: Selection) -> dict[str, int]:
        """Actions by status (and how many need attention), every status named. All, or a
        group: from the counter items (a bounded read, however many actions there are); by id
        prefix or need of attention: from their index."""
        _refuse_status(selection)
        if selection.prefix is None and not selection.attention:
            return self._counted_totals(selection)
        counts: Counter[str] = Counter({str(status): 0 for status in Status})
        attention = 0
        for index, key, value in _shards(selection):
            items = iter(
                self._index_stream(index, key, value, selection.prefix, None, _ALL_AT_ONCE)
            )
            while chunk := [str(item["id"]) for item in islice(items, _ALL_AT_ONCE)]:
                for action in self._load(chunk):  # (the index projects no status)
                    counts[str(action.status)] += 1
                    attention += action.needs_attention or selection.attention
        return {**counts, ATTENTION: attention}

    def _counted_totals(self, selection: Selection) -> dict[str, int]:
        today = int(self._clock.now().timestamp()) // _DAY_SECONDS
        days = range(max(today, 1), today + self._expiry_days + 2)
        ids = counter_ids(selection.group, days, SHARDS)
        totals: Counter[str] = Counter()
        for item in items_by_id(self._table, ids):
            for name, value in item.items():
                if name not in COUNTER_KEYS:
                    totals[name] += int(str(value))
        in_flight = self._in_flight(selection.group)
        totals[Status.PENDING] -= in_flight
        totals[Status.IN_PROGRESS] = in_flight
        counts = {str(status): max(0, totals[str(status)]) for status in Status}
        return {**counts, ATTENTION: max(0, totals[ATTENTION])}

    def _in_flight(self, group: str | None) -> int:
        """IN_PROGRESS actions (counted as PENDING by the counters): the fires in flight, a
        handful — each claimed at or after its fire time, so among the PENDING entries due by
        now, whose records are read."""
        claimed, _ = self._by_time(Status.IN_PROGRESS, None, _ALL_AT_ONCE)
        return sum(1 for _, action in claimed if group is None or action.group == group)

    def _load(self, ids: list[str]) -> list[Action]:
        """The records of ``ids``, in that order (one that vanished meanwhile is left out, and
        one stored in a format this code does not read is logged and left out: a page, a count
        or a pass over many actions is not stopped by one it cannot read)."""
        items = {str(item["id"]): item for item in items_by_id(self._table, ids)}
        loaded = []
        for action_id in ids:
            if action_id in items:
                try:
                    action = from_item(items[action_id], self._refs)
                except RecordFormatUnknown as unreadable:
                    log.warning("record left out", extra={"id": action_id, "why": str(unreadable)})
                    continue
                self._memo.remember(items[action_id])
                loaded.append(action)
        return loaded


def _refuse_status(selection: Selection) -> None:
    if selection.status is not None:
        raise ValueError("a count is by status already: count a selection without one")


def _shards(selection: Selection) -> list[tuple[str, str, str]]:
    if selection.group is not None:
        return [("ByGroup", "groupShard", f"{selection.group}#{n}") for n in range(SHARDS)]
    if selection.prefix is not None or not selection.attention:
        return [("ById", "idShard", f"ids#{n}") for n in range(SHARDS)]
    return [("NeedsAttention", "attentionShard", f"attention#{n}") for n in range(SHARDS)]


def _step(want: int) -> int:
    """Entries read from each of the 8 shards at a time to fill ``want`` merged: its share of
    them plus a margin (a shard holding more is read again)."""
    return -(-want // SHARDS) + 3


def _position(item: dict[str, Any]) -> tuple[int, str]:
    """Where an index item stands in fire order: (next fire in epoch ms, id)."""
    return int(str(item.get("executionTime", 0))), str(item["id"])
