"""A batch's record writes, and the settlement of tabs an earlier release left open
(``dynamodb_tabs``).

``DynamoDBTabbedRecords`` is the records port of one attempt of a batch task. Its writes are
the records' own (dynamodb_records): plain puts whose changes the count function folds from the
stream, once, like every other write's; so its tab carries nothing and ``settle`` adds nothing.
(The release before carried a batch's changes on its records under a tab and settled them at
the task's end, which is what ``DynamoDBCountTabs`` still does for a tab left open.)

``DynamoDBCountTabs`` is the port the reconciler and a retried task settle other tabs through
(and where a batch's tasks note which members' events went out: ``#announced#<batch>``, a number
set of the members' places in the batch's order, ADDed after each PutEvents call that took
their events, read by a retried or redriven task):
``open_tabs`` lists the tabs opened by a moment that are still open (from the sparse
``OpenTabs`` index), and ``settle`` adds what a tab's members still carry under it, read from
their records, fenced on the tab's version, so whoever comes second adds nothing twice.
"""

from __future__ import annotations

import random
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from tickwork.adapters.clients import AwsClients, OnTable
from tickwork.adapters.counted_memo import CountedMemo
from tickwork.adapters.dynamodb_counts import (
    Changes,
    counter_add,
    merged,
)
from tickwork.adapters.dynamodb_reads import items_by_id
from tickwork.adapters.dynamodb_records import DynamoDBRecords
from tickwork.adapters.dynamodb_tabs import (
    OPEN_TABS_INDEX,
    TAB_SHARDS,
    TabState,
    carried_by,
    tab_key,
    tab_of,
    tab_settlement,
)
from tickwork.adapters.execution_refs import ExecutionRefs
from tickwork.domain.times import to_epoch_ms

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = ["ANNOUNCED_PREFIX", "DynamoDBCountTabs", "DynamoDBTabbedRecords"]

ANNOUNCED_PREFIX = "#announced#"  # + a batch execution's name: the members whose events went out
_ANNOUNCED_KEPT_SECONDS = 7 * 86_400  # a week: past any retry or redrive of the batch
_MOST_COUNTERS = 99  # TransactWriteItems takes 100 items: the counters and the tab item
_SETTLE_ATTEMPTS = 8


class DynamoDBTabbedRecords(DynamoDBRecords):
    """The records as a batch's attempt writes them: counted by the fold, like any write."""

    def settle(self) -> int:
        return 0  # nothing is carried: each write is folded from the stream


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
        del tab, attempt, members, now  # a tab of this release carries nothing
        return DynamoDBTabbedRecords(self._name, self._given, self._clients, self._memo, self._refs)

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
