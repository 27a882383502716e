"""RejectionLog over the actions table: the last ``keep`` rejections in a ring of slot items
``#rejected#<n mod keep>``, numbered by the counter item ``#rejected`` (an atomic ADD). A
rejection costs two writes; reading the newest is one GetItem and a BatchGetItem per 100 slots.
A slot holds the newest number written to it (a conditional put). When ``KeepRejections``
changes, slots are numbered anew: the ones kept before show again as the ring refills, and a
smaller ring leaves its old higher slots unread. Ids starting with ``#`` are never an action's
(docs/contracts.md)."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from tickwork.adapters.clients import AwsClients, OnTable
from tickwork.adapters.dynamodb_reads import items_by_id
from tickwork.domain.times import iso

__all__ = ["COUNTER_ID", "SLOT_PREFIX", "DynamoDBRejections"]

COUNTER_ID = "#rejected"
SLOT_PREFIX = "#rejected#"
_MESSAGE_CHARS = 2000
_PROBLEMS = 20


class DynamoDBRejections(OnTable):
    def __init__(
        self,
        table_name: str,
        keep: int,
        table: Any = None,
        clients: AwsClients | None = None,
    ) -> None:
        super().__init__(table_name, table, clients)
        self._keep = keep

    def keep(self, rejection: dict[str, Any], at: datetime) -> None:
        if self._keep <= 0:
            return
        answer = self._table.update_item(
            Key={"id": COUNTER_ID},
            UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": 1},
            ReturnValues="UPDATED_NEW",
        )
        number = int(str(answer["Attributes"]["n"]))
        kept = {k: v for k, v in bounded(rejection).items() if v is not None and v != []}
        if "id" in kept:  # the action's id; the item's own is the slot's
            kept["actionId"] = kept.pop("id")
        # Two refusals at once may share a slot (number and number + keep): the newer stays.
        newer_there = self._table.meta.client.exceptions.ConditionalCheckFailedException
        with contextlib.suppress(newer_there):
            self._table.put_item(
                Item={**kept, "id": _slot(number, self._keep), "number": number, "at": iso(at)},
                ConditionExpression="attribute_not_exists(#n) OR #n < :n",
                ExpressionAttributeNames={"#n": "number"},
                ExpressionAttributeValues={":n": number},
            )

    def latest(self, limit: int) -> list[dict[str, Any]]:
        if self._keep <= 0 or limit <= 0:
            return []
        counter = self._table.get_item(Key={"id": COUNTER_ID}, ConsistentRead=True).get("Item")
        if counter is None:
            return []
        newest = int(str(counter["n"]))
        numbers = range(newest, max(0, newest - min(limit, self._keep)), -1)
        by_number = {
            int(str(item["number"])): item
            for item in items_by_id(self._table, [_slot(n, self._keep) for n in numbers])
        }
        return [_plain(by_number[n]) for n in numbers if n in by_number]


def bounded(rejection: dict[str, Any]) -> dict[str, Any]:
    """A rejection cut to what one slot item holds: its message and its first problems."""
    kept = dict(rejection)
    if isinstance(kept.get("message"), str):
        kept["message"] = kept["message"][:_MESSAGE_CHARS]
    if isinstance(kept.get("problems"), list):
        kept["problems"] = kept["problems"][:_PROBLEMS]
    return kept


def _slot(number: int, keep: int) -> str:
    return f"{SLOT_PREFIX}{number % keep}"


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """The item as JSON-ready values (DynamoDB's numbers are Decimals)."""
    shown = {k: v for k, v in item.items() if k not in ("id", "actionId")}
    if "actionId" in item:
        shown["id"] = item["actionId"]
    shown["number"] = int(str(shown["number"]))
    return shown
