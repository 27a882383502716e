"""ActionRecords over the actions table: one record read, created, replaced or deleted whole,
every write fenced on the version read.

A write that changes what the action is counted as (its status, group, need of attention or
expiry day: dynamodb_counts) is one transaction with the counters' ``ADD``s, so a count is
never off by a crash; any other write is one conditional PutItem. What the stored version
counts as comes from the shared ``CountedMemo`` (no read), else from one consistent read.
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from tickwork.adapters.clients import AwsClients, OnTable
from tickwork.adapters.dynamodb_counts import (
    CountedAs,
    CountedMemo,
    counted_as,
    counter_add,
    deltas,
)
from tickwork.adapters.dynamodb_record import from_item, to_item
from tickwork.domain.action import Action
from tickwork.domain.errors import ActionConflict
from tickwork.domain.times import iso

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

    from tickwork.adapters.dynamodb_count_tab import TabbedRecords

__all__ = ["DynamoDBRecords"]

_TRANSACTION_ATTEMPTS = 5
_CHANGED = "the record changed since it was read"


class _Contended(Exception):
    """A transaction met another on a counter item (TransactionConflict): try again."""


class DynamoDBRecords(OnTable):
    def __init__(
        self,
        table_name: str,
        table: Table | None = None,
        clients: AwsClients | None = None,
        memo: CountedMemo | None = None,
    ) -> None:
        super().__init__(table_name, table, clients)
        self._memo = memo or CountedMemo()

    def get(self, action_id: str) -> Action | None:
        item = self._table.get_item(Key={"id": action_id}, ConsistentRead=True).get("Item")
        if item is None:
            return None
        self._memo.remember(item)
        return from_item(item)

    def create(self, action: Action) -> None:
        self._write(action, None)

    def save(self, action: Action, expected_version: int) -> None:
        self._write(action, expected_version)

    def counting_later(self, tab: str, attempt: int) -> TabbedRecords:
        from tickwork.adapters.dynamodb_count_tab import TabbedRecords  # it extends this class

        return TabbedRecords(self._name, tab, attempt, self._given, self._clients, self._memo)

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
            self._memo.remember(item)
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
                raise ActionConflict(str(item["id"]), _CHANGED) from error
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
            writes.append(counter_add(self._name, counter, fields))
        try:
            self._table.meta.client.transact_write_items(TransactItems=writes)
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            reasons = [r.get("Code") for r in error.response.get("CancellationReasons", [])]
            if reasons and reasons[0] == "ConditionalCheckFailed":
                raise ActionConflict(str(item["id"]), _CHANGED) from error
            if "TransactionConflict" in reasons or not reasons:
                raise _Contended() from error
            raise

    def _before(self, action: Action, version: int) -> CountedAs | None:
        """What the stored version ``version`` of the action counts as: remembered, or read."""
        known, counted = self._memo.recall(action.id, version, iso(action.created_at))
        if known:
            return counted
        item = self._table.get_item(Key={"id": action.id}, ConsistentRead=True).get("Item")
        if item is None or int(str(item["version"])) != version:
            raise ActionConflict(action.id, _CHANGED)
        self._memo.remember(item)
        return counted_as(item)
