"""CalendarStore over the actions table: a calendar is the item ``#calendar#<name>`` (its JSON
in ``calendar``, its ``version`` for the conditional write), and the item ``#calendars`` holds
the set of names, so listing is a GetItem and a BatchGetItem, never a scan. Ids starting with
``#`` are never an action's (docs/contracts.md)."""

from __future__ import annotations

import json
from typing import Any

from tickwork.adapters.clients import OnTable
from tickwork.adapters.dynamodb_reads import items_by_id
from tickwork.domain.errors import CalendarConflict
from tickwork.domain.schedule.calendar import Calendar

__all__ = ["INDEX_ID", "PREFIX", "DynamoDBCalendars"]

INDEX_ID = "#calendars"
PREFIX = "#calendar#"


class DynamoDBCalendars(OnTable):
    def get(self, name: str) -> Calendar | None:
        item = self._table.get_item(Key={"id": PREFIX + name}, ConsistentRead=True).get("Item")
        return None if item is None else _calendar(item)

    def put(self, calendar: Calendar) -> None:
        conflict = self._table.meta.client.exceptions.ConditionalCheckFailedException
        item: dict[str, Any] = {
            "id": PREFIX + calendar.name,
            "version": calendar.version,
            "calendar": json.dumps(calendar.to_dict(), separators=(",", ":")),
        }
        try:
            if calendar.version == 1:
                self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(id)")
            else:
                self._table.put_item(
                    Item=item,
                    ConditionExpression="version = :before",
                    ExpressionAttributeValues={":before": calendar.version - 1},
                )
        except conflict as error:
            raise CalendarConflict(calendar.name) from error
        self._table.update_item(
            Key={"id": INDEX_ID},
            UpdateExpression="ADD #names :name",
            ExpressionAttributeNames={"#names": "names"},
            ExpressionAttributeValues={":name": {calendar.name}},
        )

    def delete(self, name: str) -> bool:
        answer = self._table.delete_item(Key={"id": PREFIX + name}, ReturnValues="ALL_OLD")
        self._table.update_item(
            Key={"id": INDEX_ID},
            UpdateExpression="DELETE #names :name",
            ExpressionAttributeNames={"#names": "names"},
            ExpressionAttributeValues={":name": {name}},
        )
        return "Attributes" in answer

    def all(self) -> list[Calendar]:
        index = self._table.get_item(Key={"id": INDEX_ID}, ConsistentRead=True).get("Item")
        held: Any = (index or {}).get("names") or set()
        names = sorted(str(n) for n in held)
        found = {str(i["id"]): i for i in items_by_id(self._table, [PREFIX + n for n in names])}
        return [_calendar(found[PREFIX + n]) for n in names if PREFIX + n in found]


def _calendar(item: dict[str, Any]) -> Calendar:
    return Calendar.from_dict(json.loads(str(item["calendar"])))
