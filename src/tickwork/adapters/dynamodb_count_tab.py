"""A batch's record writes on its tab, and the settlement of tabs (``dynamodb_tabs``).

``DynamoDBTabbedRecords`` is the records port of one attempt of a batch task: a write that
changes what an action counts as, or records a fire, puts the record alone (a plain conditional
put, one write unit a KB) carrying those changes under the tab; the tab item is written before
the first record that carries it. Changes the stored version carries for another tab are
carried on while that tab is open, and dropped once it is settled. ``settle`` settles the tab
at the task's end: the changes it wrote, in one transaction per up to 99 counter items.

``DynamoDBCountTabs`` is the port the reconciler and a retried task settle other tabs through
(and where a batch's tasks note which members' events went out: ``#announced#<batch>``, a number
set of the members' places in the batch's order, ADDed after each PutEvents call that took
their events, read by a retried or redriven task):
``open_tabs`` lists the tabs opened by a moment that are still open (from the sparse
``OpenTabs`` index), and ``settle`` adds what a tab's members still carry under it, read from
their records. Both go through ``_settle``: fenced on the tab's version, so whoever comes second
adds nothing twice.
"""

from __future__ import annotations

import random
import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from tickwork.adapters.clients import AwsClients, OnTable
from tickwork.adapters.counted_memo import CountedMemo
from tickwork.adapters.dynamodb_counts import (
    Changes,
    counted_as,
    counter_add,
    deltas,
    fire_changes,
    merged,
)
from tickwork.adapters.dynamodb_reads import items_by_id
from tickwork.adapters.dynamodb_record import to_item
from tickwork.adapters.dynamodb_records import DynamoDBRecords, fits
from tickwork.adapters.dynamodb_tabs import (
    OPEN_TABS_INDEX,
    TAB_SHARDS,
    UNCOUNTED,
    TabState,
    carried_by,
    carried_item,
    open_tab_item,
    tab_key,
    tab_of,
    tab_settlement,
)
from tickwork.adapters.execution_refs import ExecutionRefs
from tickwork.domain.action import Action, Occurrence
from tickwork.domain.times import to_epoch_ms

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = ["ANNOUNCED_PREFIX", "DynamoDBCountTabs", "DynamoDBTabbedRecords"]

ANNOUNCED_PREFIX = "#announced#"  # + a batch execution's name: the members whose events went out
_ANNOUNCED_KEPT_SECONDS = 7 * 86_400  # a week: past any retry or redrive of the batch
_MOST_COUNTERS = 99  # TransactWriteItems takes 100 items: the counters and the tab item
_SETTLE_ATTEMPTS = 8


class DynamoDBTabbedRecords(DynamoDBRecords):
    def __init__(
        self,
        table_name: str,
        tab: str,
        members: list[str],
        now: datetime,
        table: Table | None = None,
        clients: AwsClients | None = None,
        memo: CountedMemo | None = None,
        refs: ExecutionRefs | None = None,
    ) -> None:
        super().__init__(table_name, table, clients, memo, refs)
        self._tab = tab
        self._members = sorted(set(members))
        self._opened_at = to_epoch_ms(now)
        self._due: dict[str, Changes] = {}
        self._opened = False
        self._lock = threading.Lock()
        self._open_tabs: dict[str, bool] = {}  # other tabs as read once: open, or settled
        self._tab_reads = threading.Lock()

    def save(
        self, action: Action, expected_version: int, recorded: Occurrence | None = None
    ) -> None:
        self._open()  # first: the tab's name is settled before a record carries it
        item = to_item(action, self._refs)
        stored = self._stored(action, expected_version)
        carried = dict(stored.carried)
        mine = merged(
            carried.pop(self._tab, {}),
            deltas(stored.counted, counted_as(item)),
            fire_changes(action.group, recorded),
        )
        kept = {tab: changes for tab, changes in carried.items() if self._still_open(tab)}
        if mine:
            kept[self._tab] = mine
        uncounted = carried_item(kept, action.group)
        if uncounted is not None:
            item[UNCOUNTED] = uncounted
        fits(item)
        self._put(item, "version = :expected", {":expected": expected_version})
        self._memo.remember(item)
        with self._lock:
            if mine:
                self._due[action.id] = mine
            else:
                self._due.pop(action.id, None)

    def settle(self) -> int:
        """Settle this tab: add the changes this attempt's writes carry (those a later write of
        a member settled already left out). How many records it counted."""
        with self._lock:
            due = dict(self._due)
            opened = self._opened
        if not opened:
            return 0
        counted = _settle(self._table, self._name, self._tab, lambda _state: due)
        with self._lock:
            for action_id in due:
                self._due.pop(action_id, None)
        return counted

    def _open(self) -> None:
        """Write the tab's item (once, before the first record that carries the tab). A tab of
        this name already there was left by an earlier run of this attempt (a redrive numbers
        the attempts from 0 again): it is settled from its members' records, as the reconciler
        would, and this run's tab takes the next free name (``<batch>#<attempt>.<run>``)."""
        with self._lock:
            if self._opened:
                return
            base, run = self._tab, 0
            while True:
                item = open_tab_item(self._tab, self._members, self._opened_at)
                try:
                    self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(id)")
                    break
                except ClientError as error:
                    if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                        raise
                DynamoDBCountTabs(self._name, self._given, self._clients, refs=self._refs).settle(
                    self._tab
                )
                run += 1
                self._tab = f"{base}.{run}"
            self._opened = True

    def _still_open(self, tab: str) -> bool:
        """Whether another tab the stored record carries changes for is open: read once per
        tab for the whole task (its members mostly carry one, their last batch's). A tab read
        open may settle meanwhile: carrying its changes on is harmless (a settled tab's changes
        are dropped by a later write, and it never settles twice); one read settled stays so."""
        with self._tab_reads:  # the members' threads wait for the one read
            known = self._open_tabs.get(tab)
            if known is None:
                state = self._tab_state(tab)
                known = self._open_tabs[tab] = state is not None and state.open
        return known


class DynamoDBCountTabs(OnTable):
    """The tabs of batches: opened by a batch's task, settled by it, by its retry or by the
    reconciler."""

    def __init__(
        self,
        table_name: str,
        table: Table | None = None,
        clients: AwsClients | None = None,
        memo: CountedMemo | None = None,
        refs: ExecutionRefs | None = None,
    ) -> None:
        super().__init__(table_name, table, clients)
        self._memo = memo or CountedMemo()
        self._refs = refs

    def open(
        self, tab: str, attempt: int, members: list[str], now: datetime
    ) -> DynamoDBTabbedRecords:
        return DynamoDBTabbedRecords(
            self._name,
            f"{tab}#{attempt}",
            members,
            now,
            self._given,
            self._clients,
            self._memo,
            self._refs,
        )

    def open_tabs(self, opened_by: datetime, limit: int = 1000) -> list[str]:
        by = to_epoch_ms(opened_by)
        found: list[str] = []
        for shard in range(TAB_SHARDS):
            kwargs: dict[str, Any] = {
                "IndexName": OPEN_TABS_INDEX,
                "KeyConditionExpression": "tabShard = :s AND openedAt <= :by",
                "ExpressionAttributeValues": {":s": f"tabs#{shard}", ":by": by},
            }
            while len(found) < limit:
                page = self._table.query(**kwargs)
                found += [tab_of(str(item["id"])) for item in page.get("Items", [])]
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return sorted(found)[:limit]

    def note_announced(self, batch: str, members: list[int], now: datetime) -> None:
        if not members:
            return
        self._table.update_item(
            Key={"id": f"{ANNOUNCED_PREFIX}{batch}"},
            UpdateExpression="ADD ids :ids SET #ttl = if_not_exists(#ttl, :ttl)",
            ExpressionAttributeNames={"#ttl": "ttl"},
            ExpressionAttributeValues={
                ":ids": set(members),  # places, not ids: a few bytes each
                ":ttl": int(now.timestamp()) + _ANNOUNCED_KEPT_SECONDS,
            },
        )

    def announced(self, batch: str) -> set[int]:
        key = {"id": f"{ANNOUNCED_PREFIX}{batch}"}
        item = self._table.get_item(Key=key, ConsistentRead=True).get("Item") or {}
        held: Any = item.get("ids") or set()
        return {int(i) for i in held}

    def settle(self, tab: str) -> int:
        """Add what the tab's members still carry under it, and close it (its batch ended)."""
        return _settle(self._table, self._name, tab, lambda state: self._carried(state))

    def _carried(self, state: TabState) -> dict[str, Changes]:
        members = sorted(state.members - state.settled)
        carried: dict[str, Changes] = {}
        for item in items_by_id(self._table, members):
            changes = carried_by(item).get(state.tab)
            if changes:
                carried[str(item["id"])] = changes
        return carried


def _settle(table: Table, table_name: str, tab: str, due: Any) -> int:
    """Add the tab's changes ``due(state)`` (by record id) not settled yet and close the tab:
    one transaction per up to 99 counter items, each fenced on the tab's version. How many
    records it counted (0: the tab was settled already, or never opened)."""
    for attempt in range(_SETTLE_ATTEMPTS):
        item = table.get_item(Key=tab_key(tab), ConsistentRead=True).get("Item")
        if item is None:
            return 0
        state = TabState.of(item)
        if not state.open:
            return 0
        waiting = {i: c for i, c in due(state).items() if i not in state.settled and c}
        try:
            _add(table, table_name, state, waiting)
        except _Moved:
            time.sleep(random.uniform(0, 0.02 * (attempt + 1)))
            continue
        return len(waiting)
    raise RuntimeError(f"tab {tab} kept moving while it was settled: the next run settles it")


class _Moved(Exception):
    """The tab was settled, in part or whole, by someone else meanwhile: read it again."""


def _add(table: Table, table_name: str, state: TabState, waiting: dict[str, Changes]) -> None:
    parts = _parts(waiting) or [[]]
    for n, ids in enumerate(parts):
        writes: list[Any] = [tab_settlement(table_name, state, ids, close=n == len(parts) - 1)]
        total = merged(*(waiting[i] for i in ids))
        writes += [counter_add(table_name, counter, fields) for counter, fields in total.items()]
        try:
            table.meta.client.transact_write_items(TransactItems=writes)
        except ClientError as error:
            if error.response["Error"]["Code"] == "TransactionCanceledException":
                raise _Moved() from error
            raise
        state = TabState(state.tab, True, state.version + 1, state.members, state.settled)


def _parts(due: dict[str, Changes]) -> list[list[str]]:
    """The records, in parts whose counter items together fit one transaction."""
    parts: list[list[str]] = []
    ids: list[str] = []
    counters: set[str] = set()
    for action_id in sorted(due):
        more = counters | set(due[action_id])
        if ids and len(more) > _MOST_COUNTERS:
            parts.append(ids)
            ids, counters, more = [], set(), set(due[action_id])
        ids.append(action_id)
        counters = more
    if ids:
        parts.append(ids)
    return parts
