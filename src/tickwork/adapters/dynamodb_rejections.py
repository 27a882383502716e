"""RejectionLog over the actions table: a ring of the last ``keep`` rejections per sender.

A sender's ring is numbered by its counter item (an atomic ADD) and held in its slot items,
``<ring>#<n mod keep>``, each holding the newest number written to it (a conditional put). The
ring of a source ``s`` is ``#rejected@<the first 96 bits of SHA-256(s), hex>``: every sender
has a ring of its own, however many there are, so one can never push out another's entries,
and no source's name (a ``#`` or ``@`` in it) can make one ring's id another's slot. Refusals
no sender is known for are in ``#rejected``. Each slot and counter expires a month after its
last write (``ttl``), so forged sources cost the table nothing lasting.

Reading one sender's entries (``latest(limit, source)``) reads its ring: a GetItem and a
BatchGetItem per 100 slots. Reading everyone's reads the rings of the ``MOST_SOURCES`` senders
refused last, listed with when in the item ``#rejected@sources`` (pruned to them as it grows):
a flood of new senders can hide an older sender from that unfiltered view, never from its own.
Rings an earlier version kept under the source's own name (``#rejected@s``, ``sources`` listed
as a set, later senders sharing ``#rejected@*``) are still read. A rejection costs three or
four writes. When ``KeepRejections`` changes, slots are numbered anew. Ids starting with ``#``
are never an action's (docs/contracts.md).
"""

from __future__ import annotations

import contextlib
import hashlib
from datetime import datetime, timedelta
from typing import Any

from tickwork.adapters.clients import AwsClients, OnTable
from tickwork.adapters.dynamodb_reads import items_by_id
from tickwork.domain.announcements import Rejected
from tickwork.domain.times import iso

__all__ = [
    "COUNTER_ID",
    "MOST_SOURCES",
    "SLOT_PREFIX",
    "SOURCES_ID",
    "DynamoDBRejections",
    "bounded",
    "ring_of",
]

COUNTER_ID = "#rejected"  # the ring of refusals no sender is known for
SLOT_PREFIX = "#rejected#"
SOURCES_ID = "#rejected@sources"
MOST_SOURCES = 32  # the senders refused last, whose rings the unfiltered view reads
_KEPT_FOR = timedelta(days=30)
_LEGACY_OTHERS = "*"  # the ring an earlier version's senders past its 32 shared


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
        source = source if isinstance(source, str) and source else None
        ring = COUNTER_ID if source is None else ring_of(source)
        expires = int((at + _KEPT_FOR).timestamp())
        answer = self._table.update_item(
            Key={"id": ring},
            UpdateExpression="ADD n :one SET #ttl = :ttl",
            ExpressionAttributeNames={"#ttl": "ttl"},
            ExpressionAttributeValues={":one": 1, ":ttl": expires},
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
                    "ttl": expires,
                },
                ConditionExpression="attribute_not_exists(#n) OR #n < :n",
                ExpressionAttributeNames={"#n": "number"},
                ExpressionAttributeValues={":n": number},
            )
        if source is not None:
            self._seen(source, at)

    def latest(self, limit: int, source: str | None = None) -> list[dict[str, Any]]:
        if self._keep <= 0 or limit <= 0:
            return []
        recent, legacy = self._sources()
        if source is not None:
            rings = [ring_of(source)] + ([_legacy_ring(source)] if source in legacy else [])
            if _LEGACY_OTHERS in legacy:
                rings.append(_legacy_ring(_LEGACY_OTHERS))
        else:
            rings = [COUNTER_ID, *(ring_of(s) for s in recent)]
            rings += [_legacy_ring(s) for s in sorted(legacy)]
        found: list[dict[str, Any]] = []
        for ring in rings:
            found += self._newest(ring, limit)
        if source is not None:
            found = [r for r in found if r.get("source") == source]
        found.sort(key=lambda r: (str(r["at"]), int(r["number"])), reverse=True)
        return found[:limit]

    def _newest(self, ring: str, limit: int) -> list[dict[str, Any]]:
        counter = self._table.get_item(Key={"id": ring}, ConsistentRead=True).get("Item")
        if counter is None or "n" not in counter:
            return []
        newest = int(str(counter["n"]))
        numbers = range(newest, max(0, newest - min(limit, self._keep)), -1)
        by_number = {
            int(str(item["number"])): item
            for item in items_by_id(self._table, [_slot(ring, n, self._keep) for n in numbers])
            if "number" in item
        }
        return [_plain(by_number[n]) for n in numbers if n in by_number]

    def _sources(self) -> tuple[list[str], set[str]]:
        """The senders refused last (newest first, at most ``MOST_SOURCES``), and those an
        earlier version listed."""
        item = self._table.get_item(Key={"id": SOURCES_ID}, ConsistentRead=True).get("Item")
        seen: Any = (item or {}).get("seen") or {}
        recent = sorted(seen, key=lambda s: str(seen[s]), reverse=True)[:MOST_SOURCES]
        legacy: Any = (item or {}).get("sources") or set()
        return recent, {str(s) for s in legacy}

    def _seen(self, source: str, at: datetime) -> None:
        """Note the sender refused at ``at``; prune the list to the ``MOST_SOURCES`` refused
        last once it holds twice as many (conditional on what was read: a lost race leaves
        it for the next refusal)."""
        try:
            answer = self._table.update_item(
                Key={"id": SOURCES_ID},
                UpdateExpression="SET seen.#s = :at",
                ExpressionAttributeNames={"#s": source},
                ExpressionAttributeValues={":at": iso(at)},
                ReturnValues="ALL_NEW",
            )
        except self._table.meta.client.exceptions.ClientError as error:
            if error.response["Error"]["Code"] != "ValidationException":
                raise
            answer = self._table.update_item(  # the first sender noted: the list made
                Key={"id": SOURCES_ID},
                UpdateExpression="SET seen = if_not_exists(seen, :first)",
                ExpressionAttributeValues={":first": {source: iso(at)}},
                ReturnValues="ALL_NEW",
            )
        seen: Any = answer["Attributes"].get("seen") or {}
        if len(seen) < 2 * MOST_SOURCES:
            return
        kept = sorted(seen, key=lambda s: str(seen[s]), reverse=True)[:MOST_SOURCES]
        pruned = {s: seen[s] for s in kept}
        moved = self._table.meta.client.exceptions.ConditionalCheckFailedException
        with contextlib.suppress(moved):
            self._table.update_item(
                Key={"id": SOURCES_ID},
                UpdateExpression="SET seen = :pruned",
                ConditionExpression="size(seen) = :size",
                ExpressionAttributeValues={":pruned": pruned, ":size": len(seen)},
            )


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


def ring_of(source: str) -> str:
    """A sender's ring: its own, named by a hash of the source (hex: no ``#`` or ``@``)."""
    return f"{COUNTER_ID}@{hashlib.sha256(source.encode()).hexdigest()[:24]}"


def _legacy_ring(source: str) -> str:
    """The ring an earlier version kept a sender's refusals in."""
    return f"{COUNTER_ID}@{source}"


def _slot(ring: str, number: int, keep: int) -> str:
    return f"{ring}#{number % keep}"


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """The item as JSON-ready values (DynamoDB's numbers are Decimals)."""
    shown = {k: v for k, v in item.items() if k not in ("id", "actionId", "ttl")}
    if "actionId" in item:
        shown["id"] = item["actionId"]
    shown["number"] = int(str(shown["number"]))
    return shown
