"""CalendarStore over the actions table: a calendar is the item ``#calendar#<name>`` (its JSON
in ``calendar``, its ``version`` for the conditional write, the stack's ``seal`` over it), and
the item ``#calendars`` holds the set of names, so listing is a GetItem and a BatchGetItem,
never a scan. Ids starting with ``#`` are never an action's (docs/contracts.md)."""

from __future__ import annotations

import json
from contextlib import suppress
from dataclasses import replace
from decimal import Decimal
from typing import Any

from tickwork.adapters.clients import OnTable
from tickwork.adapters.dynamodb_reads import items_by_id
from tickwork.domain.errors import CalendarConflict, CalendarTampered
from tickwork.domain.schedule.calendar import Calendar

__all__ = ["INDEX_ID", "PREFIX", "DynamoDBCalendars"]

INDEX_ID = "#calendars"
PREFIX = "#calendar#"


class DynamoDBCalendars(OnTable):
    def get(self, name: str) -> Calendar | None:
        """The calendar as stored, its seal with it (its readers check it). One whose item
        cannot be read raises ``CalendarTampered``: what it says is not taken."""
        item = self._table.get_item(Key={"id": PREFIX + name}, ConsistentRead=True).get("Item")
        return None if item is None else _calendar(item)

    def put(self, calendar: Calendar) -> None:
        conflict = self._table.meta.client.exceptions.ConditionalCheckFailedException
        item: dict[str, Any] = {
            "id": PREFIX + calendar.name,
            "version": calendar.version,
            "calendar": json.dumps(calendar.to_dict(), separators=(",", ":")),
        }
        if calendar.seal is not None:
            item["seal"] = calendar.seal
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
        listed: list[Calendar] = []
        for name in names:
            if PREFIX + name in found:
                with suppress(CalendarTampered):  # unreadable: left out of the list
                    listed.append(_calendar(found[PREFIX + name]))
        return listed


def _calendar(item: dict[str, Any]) -> Calendar:
    """The calendar as stored, with the seal the item carries (checked by its readers)."""
    seal = item.get("seal")
    name = str(item.get("id", ""))[len(PREFIX) :]
    version = item.get("version")
    stated = int(version) if isinstance(version, int | Decimal) else None
    try:
        calendar = Calendar.from_dict(json.loads(str(item["calendar"])))
    except (KeyError, TypeError, ValueError, AttributeError) as unreadable:
        raise CalendarTampered(name, "its stored content cannot be read", stated) from unreadable
    return replace(calendar, seal=seal if isinstance(seal, str) else None)
