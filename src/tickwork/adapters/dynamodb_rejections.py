"""RejectionLog over the actions table: a ring of the last ``keep`` rejections per sender.

A sender's ring is numbered by its counter item (an atomic ADD) and held in its slot items,
``<ring>#<n mod keep>``, each holding the newest number written to it (a conditional put). The
ring of a source ``s`` is ``#rejected@s``; refusals no sender is known for (and those kept
before rings were per sender) are in ``#rejected``. The sources seen are listed in the item
``#rejected@sources`` — at most ``MOST_SOURCES``; a later sender's refusals share the ring
``#rejected@*`` — so reading every sender's newest is a GetItem, one per ring, and a
BatchGetItem per 100 slots, never a scan. A rejection costs three writes. When
``KeepRejections`` changes, slots are numbered anew. Ids starting with ``#`` are never an
action's (docs/contracts.md).
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from tickwork.adapters.clients import AwsClients, OnTable
from tickwork.adapters.dynamodb_reads import items_by_id
from tickwork.domain.announcements import Rejected
from tickwork.domain.times import iso

__all__ = [
    "COUNTER_ID",
    "MOST_SOURCES",
    "OTHERS",
    "SLOT_PREFIX",
    "SOURCES_ID",
    "DynamoDBRejections",
    "bounded",
]

COUNTER_ID = "#rejected"  # the ring of refusals no sender is known for
SLOT_PREFIX = "#rejected#"
SOURCES_ID = "#rejected@sources"
MOST_SOURCES = 32  # senders with a ring of their own; the others share OTHERS
OTHERS = "*"


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
        source = rejection.get("source")
        ring = self._ring_of(source if isinstance(source, str) and source else None)
        answer = self._table.update_item(
            Key={"id": ring},
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
                Item={
                    **kept,
                    "id": _slot(ring, number, self._keep),
                    "number": number,
                    "at": iso(at),
                },
                ConditionExpression="attribute_not_exists(#n) OR #n < :n",
                ExpressionAttributeNames={"#n": "number"},
                ExpressionAttributeValues={":n": number},
            )

    def latest(self, limit: int, source: str | None = None) -> list[dict[str, Any]]:
        if self._keep <= 0 or limit <= 0:
            return []
        if source is not None:
            rings = [_ring(source)] if source in self._sources() else []
        else:
            rings = [COUNTER_ID, *(_ring(s) for s in sorted(self._sources()))]
        found: list[dict[str, Any]] = []
        for ring in rings:
            found += self._newest(ring, limit)
        found.sort(key=lambda r: (str(r["at"]), int(r["number"])), reverse=True)
        return found[:limit]

    def _newest(self, ring: str, limit: int) -> list[dict[str, Any]]:
        counter = self._table.get_item(Key={"id": ring}, ConsistentRead=True).get("Item")
        if counter is None:
            return []
        newest = int(str(counter["n"]))
        numbers = range(newest, max(0, newest - min(limit, self._keep)), -1)
        by_number = {
            int(str(item["number"])): item
            for item in items_by_id(self._table, [_slot(ring, n, self._keep) for n in numbers])
        }
        return [_plain(by_number[n]) for n in numbers if n in by_number]

    def _sources(self) -> set[str]:
        item = self._table.get_item(Key={"id": SOURCES_ID}, ConsistentRead=True).get("Item")
        listed: Any = (item or {}).get("sources") or set()
        return {str(s) for s in listed}

    def _ring_of(self, source: str | None) -> str:
        """The ring a sender's refusals go to, the sender listed among the sources (up to
        ``MOST_SOURCES`` of them; later ones share the ring of the others)."""
        if source is None:
            return COUNTER_ID
        listed = self._table.meta.client.exceptions.ConditionalCheckFailedException
        try:
            self._table.update_item(
                Key={"id": SOURCES_ID},
                UpdateExpression="ADD sources :s",
                ConditionExpression="contains(sources, :one) OR attribute_not_exists(sources) "
                "OR size(sources) < :most",
                ExpressionAttributeValues={":s": {source}, ":one": source, ":most": MOST_SOURCES},
            )
        except listed:
            source = OTHERS
            self._table.update_item(
                Key={"id": SOURCES_ID},
                UpdateExpression="ADD sources :s",
                ExpressionAttributeValues={":s": {OTHERS}},
            )
        return _ring(source)


def bounded(rejection: dict[str, Any]) -> dict[str, Any]:
    """A rejection as one slot item holds it: bounded as the Rejected event is
    (``domain.announcements.Rejected``), whatever dict it is given."""
    problems = rejection.get("problems")

    def text(key: str) -> str | None:
        value = rejection.get(key)
        return None if value is None else str(value)

    kept = Rejected(
        action_id=text("id"),
        request=text("request") or "",
        reason=text("reason") or "",
        message=text("message") or "",
        problems=[p for p in problems if isinstance(p, dict)] if isinstance(problems, list) else [],
        event_id=text("eventId"),
        signature=text("signature"),
        source=text("source"),
    ).to_wire()
    return {"detailType": rejection.get("detailType", str(Rejected.detail_type)), **kept}


def _ring(source: str) -> str:
    return f"{COUNTER_ID}@{source}"


def _slot(ring: str, number: int, keep: int) -> str:
    return f"{ring}#{number % keep}"


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """The item as JSON-ready values (DynamoDB's numbers are Decimals)."""
    shown = {k: v for k, v in item.items() if k not in ("id", "actionId")}
    if "actionId" in item:
        shown["id"] = item["actionId"]
    shown["number"] = int(str(shown["number"]))
    return shown
