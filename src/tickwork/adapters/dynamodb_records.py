"""ActionRecords over the actions table: one record read, created, replaced or deleted whole,
every write fenced on the version read.

A write is one conditional PutItem (one write unit a KB): it moves no counter itself. Its
``tally`` says which version it wrote and which fire it records, and the count function folds
the table's stream into the counters and fire totals, each write once
(dynamodb_stream_counts; docs/protocol.md, "Counts and fire totals").

A stored record may still carry a batch's changes not settled yet (``uncounted``, written by
the release before: dynamodb_tabs). A write that replaces it settles them in a transaction of
its own when their tab is still open (fenced on the tab's version), with its own counter
changes and no ``tally``, and drops them when it is not (its batch, a retry or the reconciler
added them). A delete takes the record off its counters in its transaction, settling what it
carries the same way; the fold never counts a delete.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from tickwork.adapters.clients import AwsClients, OnTable
from tickwork.adapters.counted_memo import CountedMemo, Stored
from tickwork.adapters.dynamodb_counts import (
    TALLY,
    Changes,
    counted_as,
    counter_add,
    deltas,
    fire_changes,
    merged,
    tally_of,
)
from tickwork.adapters.dynamodb_record import from_item, to_item
from tickwork.adapters.dynamodb_sizes import MAX_ITEM_BYTES, item_size
from tickwork.adapters.dynamodb_tabs import TabState, carried_by, tab_key, tab_settlement
from tickwork.adapters.execution_refs import ExecutionRefs
from tickwork.domain.action import Action, Occurrence
from tickwork.domain.errors import ActionConflict, RecordTooLarge
from tickwork.domain.identifiers import is_own_item
from tickwork.domain.times import iso

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = ["DynamoDBRecords", "fits"]

_TRANSACTION_ATTEMPTS = 5
_CHANGED = "the record changed since it was read"


def fits(item: dict[str, Any]) -> None:
    """Refuse, before anything is written, a record larger than DynamoDB holds in one item."""
    size = item_size(item)
    if size > MAX_ITEM_BYTES:
        raise RecordTooLarge(str(item["id"]), size, MAX_ITEM_BYTES)


class _Contended(Exception):
    """A transaction met another on a counter item (TransactionConflict): try again."""


class DynamoDBRecords(OnTable):
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
        self._refs = refs  # the stack's machines: executions named by machine and name

    def get(self, action_id: str) -> Action | None:
        if is_own_item(action_id):
            return None  # the stack's own items (counters, tabs, calendars, the pump) are none
        item = self._table.get_item(Key={"id": action_id}, ConsistentRead=True).get("Item")
        if item is None:
            return None
        self._memo.remember(item)
        return from_item(item, self._refs)

    def create(self, action: Action) -> None:
        self._write(action, None)

    def save(
        self, action: Action, expected_version: int, recorded: Occurrence | None = None
    ) -> None:
        self._write(action, expected_version, recorded)

    def delete(self, action_id: str) -> None:
        """Delete the record and take it off its counters (a purge), settling what it carries."""
        if is_own_item(action_id):
            return  # never one of the stack's own items
        for attempt in range(_TRANSACTION_ATTEMPTS):
            item = self._table.get_item(Key={"id": action_id}, ConsistentRead=True).get("Item")
            if item is None:
                return
            stored = Stored(counted_as(item), carried_by(item))
            settling = self._open_tabs_of(stored)
            changes = merged(deltas(stored.counted, None), *(c for _, c in settling))
            try:
                self._transact(
                    item, "version = :v", {":v": item["version"]}, changes, settling, delete=True
                )
            except (_Contended, ActionConflict):
                time.sleep(random.uniform(0, 0.02 * (attempt + 1)))
                continue
            return
        raise ActionConflict(action_id, "it kept changing while being deleted: try again")

    def _write(
        self, action: Action, expected_version: int | None, recorded: Occurrence | None = None
    ) -> None:
        """Put the record, fenced on ``expected_version`` (None: it must not exist), with its
        ``tally`` for the fold; one that replaces a version carrying an open tab's changes
        settles them, and counts itself, in one transaction with the counters' ADDs."""
        item = to_item(action, self._refs)
        fits({**item, TALLY: tally_of(action.version, recorded)})
        if expected_version is None:
            condition, values = "attribute_not_exists(id)", {}
        else:
            condition, values = "version = :expected", {":expected": expected_version}
        for attempt in range(_TRANSACTION_ATTEMPTS):
            stored = None if expected_version is None else self._stored(action, expected_version)
            settling = [] if stored is None else self._open_tabs_of(stored)
            if not settling:
                self._put({**item, TALLY: tally_of(action.version, recorded)}, condition, values)
                self._memo.remember(item)
                return
            assert stored is not None
            changes = merged(
                deltas(stored.counted, counted_as(item)),
                fire_changes(action.group, recorded),
                *(c for _, c in settling),
            )
            try:
                self._transact(item, condition, values, changes, settling)
            except _Contended:
                time.sleep(random.uniform(0, 0.02 * (attempt + 1)))
                continue
            self._memo.remember(item)
            return
        raise ActionConflict(action.id, "its counters stayed contended: try again")

    def _open_tabs_of(self, stored: Stored) -> list[tuple[TabState, Changes]]:
        """The changes the stored version carries for tabs still open (to settle now), each
        with its tab as read; those of settled tabs are dropped with the version."""
        if stored.counted is None:
            return []
        settling = []
        for tab, changes in sorted(stored.carried.items()):
            state = self._tab_state(tab)
            if state is not None and state.open and stored.counted.action_id not in state.settled:
                settling.append((state, changes))
        return settling

    def _tab_state(self, tab: str) -> TabState | None:
        item = self._table.get_item(Key=tab_key(tab), ConsistentRead=True).get("Item")
        return None if item is None else TabState.of(item)

    def _put(self, item: dict[str, Any], condition: str, values: dict[str, Any]) -> None:
        kwargs: dict[str, Any] = {"Item": item, "ConditionExpression": condition}
        if values:
            kwargs["ExpressionAttributeValues"] = values
        try:
            self._table.put_item(**kwargs)
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise ActionConflict(str(item["id"]), _CHANGED) from error
            raise

    def _transact(
        self,
        item: dict[str, Any],
        condition: str,
        values: dict[str, Any],
        changes: Changes,
        settling: Sequence[tuple[TabState, Changes]] = (),
        delete: bool = False,
    ) -> None:
        # The resource's client takes and gives plain values (boto3 serializes them).
        first: dict[str, Any] = {"TableName": self._name, "ConditionExpression": condition}
        if values:
            first["ExpressionAttributeValues"] = values
        first.update({"Key": {"id": item["id"]}} if delete else {"Item": item})
        writes: list[Any] = [{"Delete" if delete else "Put": first}]
        for state, _ in settling:
            writes.append(tab_settlement(self._name, state, [str(item["id"])], close=False))
        for counter, fields in sorted(changes.items()):
            writes.append(counter_add(self._name, counter, fields))
        try:
            self._table.meta.client.transact_write_items(TransactItems=writes)
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            reasons = [r.get("Code") for r in error.response.get("CancellationReasons", [])]
            if reasons and reasons[0] == "ConditionalCheckFailed":
                raise ActionConflict(str(item["id"]), _CHANGED) from error
            if "TransactionConflict" in reasons or "ConditionalCheckFailed" in reasons:
                raise _Contended() from error  # a counter, or a tab settled meanwhile: again
            if not reasons:
                raise _Contended() from error
            raise

    def _stored(self, action: Action, version: int) -> Stored:
        """What the stored version ``version`` of the action counts as and carries: remembered,
        or read."""
        known = self._memo.recall(action.id, version, iso(action.created_at))
        if known is not None:
            return known
        item = self._table.get_item(Key={"id": action.id}, ConsistentRead=True).get("Item")
        if item is None or int(str(item["version"])) != version:
            raise ActionConflict(action.id, _CHANGED)
        self._memo.remember(item)
        return Stored(counted_as(item), carried_by(item))
