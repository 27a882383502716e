"""Counter changes that wait on a tab, added at once: a batch's fires counted in one transaction
instead of one per fire (a one-off's completion otherwise writes its record and four counter
items in a transaction of its own: twice the write units of each, for every fire).

A write on the tab is the record's plain conditional put, with the change it makes to the
counters carried in the record itself, and kept in memory. ``countsDue`` is a list: the tab,
then one ``"<counter> <field> <amount>"`` text per ADD, the counter's ``#count#`` prefix left
out (a record pays a write unit per KB; a map of maps took half as much again).
``add_counts`` adds every change kept in one ``TransactWriteItems`` per at most 99 counter
items, each adding the records it counted to the attempt's marker item
(``#counted#<tab>#<attempt>``, expiring after two days). A later attempt of the same tab
(a retried batch task) reads the markers of the attempts before it, and ``recover`` takes up
the change a record carries from an earlier attempt unless a marker counted it: nothing is
counted twice, nothing is lost, whatever crashed where. The next write of a record drops its
``countsDue`` (every write puts the whole record).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from tickwork.adapters.clients import AwsClients
from tickwork.adapters.dynamodb_counts import (
    COUNTER_PREFIX,
    CountedMemo,
    counted_as,
    counter_add,
    deltas,
)
from tickwork.adapters.dynamodb_record import to_item
from tickwork.adapters.dynamodb_records import DynamoDBRecords
from tickwork.domain.action import Action

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = ["MARKER_PREFIX", "TabbedRecords"]

MARKER_PREFIX = "#counted#"
DUE = "countsDue"
_MOST_COUNTERS = 99  # TransactWriteItems takes 100 items: the counters and one marker
_MARKER_SECONDS = 2 * 86_400

Changes = dict[str, dict[str, int]]


class TabbedRecords(DynamoDBRecords):
    def __init__(
        self,
        table_name: str,
        tab: str,
        attempt: int,
        table: Table | None = None,
        clients: AwsClients | None = None,
        memo: CountedMemo | None = None,
    ) -> None:
        super().__init__(table_name, table, clients, memo)
        self._tab = tab
        self._attempt = attempt
        self._due: dict[str, Changes] = {}
        self._lock = threading.Lock()

    def counting_later(self, tab: str, attempt: int) -> TabbedRecords:
        return TabbedRecords(self._name, tab, attempt, self._given, self._clients, self._memo)

    def save(self, action: Action, expected_version: int) -> None:
        item = to_item(action)
        before = self._before(action, expected_version)
        changes = deltas(before, counted_as(item))
        if not changes:
            super().save(action, expected_version)
            return
        item[DUE] = _due_item(self._tab, changes)
        self._put(item, "version = :expected", {":expected": expected_version})
        self._memo.remember(item)
        with self._lock:
            self._due[action.id] = changes

    def recover(self, action_id: str) -> None:
        item = self._table.get_item(Key={"id": action_id}, ConsistentRead=True).get("Item")
        tab, adds = _due_of(item.get(DUE) if item is not None else None)
        if tab != self._tab:
            return
        with self._lock:
            self._due.setdefault(action_id, adds)

    def add_counts(self) -> int:
        with self._lock:
            due = dict(self._due)
        counted = self._counted_before()
        waiting = {action_id: c for action_id, c in due.items() if action_id not in counted}
        for ids in _parts(waiting):
            self._add(ids, waiting)
        with self._lock:
            for action_id in waiting:
                self._due.pop(action_id, None)
        return len(waiting)

    def _counted_before(self) -> set[str]:
        """The records the markers of earlier attempts of this tab counted (one read each:
        a task is retried a few times at most)."""
        counted: set[str] = set()
        for attempt in range(self._attempt):
            key = {"id": _marker(self._tab, attempt)}
            marker = self._table.get_item(Key=key, ConsistentRead=True).get("Item") or {}
            ids = marker.get("counted")
            if isinstance(ids, set):
                counted.update(str(i) for i in ids)
        return counted

    def _add(self, ids: list[str], due: dict[str, Changes]) -> None:
        total: dict[str, Counter[str]] = {}
        for action_id in ids:
            for counter, fields in due[action_id].items():
                total.setdefault(counter, Counter()).update(fields)
        writes: list[Any] = [
            {
                "Update": {
                    "TableName": self._name,
                    "Key": {"id": _marker(self._tab, self._attempt)},
                    "UpdateExpression": "ADD counted :ids SET #ttl = :ttl",
                    "ExpressionAttributeNames": {"#ttl": "ttl"},
                    "ExpressionAttributeValues": {
                        ":ids": set(ids),
                        ":ttl": int(time.time()) + _MARKER_SECONDS,
                    },
                }
            }
        ]
        for counter, fields in sorted(total.items()):
            adds = {name: value for name, value in fields.items() if value}
            if not adds:
                continue
            writes.append(counter_add(self._name, counter, adds))
        self._table.meta.client.transact_write_items(TransactItems=writes)


def _due_item(tab: str, changes: Changes) -> list[str]:
    adds = (
        f"{counter.removeprefix(COUNTER_PREFIX)} {name} {value}"
        for counter, fields in sorted(changes.items())
        for name, value in sorted(fields.items())
    )
    return [tab, *adds]


def _due_of(stored: Any) -> tuple[str | None, Changes]:
    """The tab and the ADDs a record carries; also as a map (``tab``, ``adds``), as written
    before the list."""
    if isinstance(stored, dict) and "tab" in stored:
        adds = {
            str(counter): {str(name): int(value) for name, value in fields.items()}
            for counter, fields in stored.get("adds", {}).items()
        }
        return str(stored["tab"]), adds
    if not isinstance(stored, list) or not stored:
        return None, {}
    changes: Changes = {}
    for text in stored[1:]:
        counter, name, value = str(text).rsplit(" ", 2)
        changes.setdefault(COUNTER_PREFIX + counter, {})[name] = int(value)
    return str(stored[0]), changes


def _marker(tab: str, attempt: int) -> str:
    return f"{MARKER_PREFIX}{tab}#{attempt}"


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
