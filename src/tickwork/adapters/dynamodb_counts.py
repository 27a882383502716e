"""Counts of actions by status, kept in counter items beside the records, so a count reads a
bounded number of small items however many actions the table holds.

An action is *counted as* (group, status, needs attention, expiry day). IN_PROGRESS is counted
as PENDING: a fire's claim and its record then change no counter, so recurring fires write no
counter at all; the few actions in flight are counted from the status index when asked. A
finished record is counted under the UTC day its TTL expires on: DynamoDB deletes it without
telling anyone, so a count simply leaves out the days that have passed.

A write that changes what an action is counted as moves no counter itself: its ``tally`` tells
the count function's fold of the table's stream, which adds it once (dynamodb_stream_counts);
a purge takes the record off its counters in its own transaction. Counter items are
``#count#<scope>#<day>#<shard>`` (scope ``*`` for all, ``g:<group>`` for a group; day 0 for
records that do not expire; shard from the action's id for a purge's, 0 for a fold's; a count
adds the shards up): 8 shards x (1 + expiry days) items per scope.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from tickwork.adapters.record_keys import shard_of
from tickwork.domain.action import Occurrence, Status
from tickwork.domain.fire_tally import fire_kind
from tickwork.domain.identifiers import DEFAULT_GROUP
from tickwork.domain.times import to_epoch_ms
from tickwork.ports.stores import ATTENTION

__all__ = [
    "ATTENTION",
    "COUNTER_KEYS",
    "COUNTER_PREFIX",
    "FIRE_PREFIX",
    "FOLDED",
    "MINUTE_MARK",
    "TALLY",
    "Changes",
    "CountedAs",
    "counted_as",
    "counter_add",
    "counter_ids",
    "deltas",
    "fire_changes",
    "fire_changes_at",
    "fire_counter_id",
    "merged",
    "minute_field",
    "tally_of",
]

# Counter changes by counter item: {item id: {field: amount}} (counters and fire totals alike).
Changes = dict[str, dict[str, int]]

COUNTER_PREFIX = "#count#"
FIRE_PREFIX = "#fires#"
_DAY_SECONDS = 86_400
# A record's attribute that tells the stream's fold what its write counts for
# (dynamodb_stream_counts): "<version>", or "<version> <kind> <minute>" when it records a fire.
TALLY = "tally"
# A counter item's attribute: the last fold that added to it (dynamodb_stream_counts).
FOLDED = "folded"
# A counter item's attributes that are not counts.
COUNTER_KEYS = frozenset({"id", "ttl", FOLDED})
# An hour's fire-total field ``<kind>@<mm>`` counts the fires of one of its minutes.
MINUTE_MARK = "@"
_MINUTE_ITEM = re.compile(rf"({re.escape(FIRE_PREFIX)}.*#)m(\d+)")


@dataclass(frozen=True)
class CountedAs:
    action_id: str
    group: str
    status: str
    attention: bool
    day: int  # the UTC day (since the epoch) its TTL expires on; 0: it does not expire


def counted_as(item: dict[str, Any]) -> CountedAs | None:
    """What a stored item counts as (None for an item that is not an action)."""
    action_id = str(item["id"])
    if action_id.startswith("#"):
        return None
    status = str(item["status"])
    ttl = item.get("ttl")
    return CountedAs(
        action_id=action_id,
        group=str(item.get("group", DEFAULT_GROUP)),
        status=Status.PENDING if status == Status.IN_PROGRESS else status,
        attention="attentionShard" in item,
        day=int(ttl) // _DAY_SECONDS if ttl is not None else 0,
    )


def _counters(counted: CountedAs) -> list[str]:
    shard = shard_of(counted.action_id)
    return [
        f"{COUNTER_PREFIX}{scope}#{counted.day}#{shard}" for scope in ("*", f"g:{counted.group}")
    ]


def deltas(before: CountedAs | None, after: CountedAs | None) -> dict[str, dict[str, int]]:
    """The ADDs that move an action from ``before`` to ``after``, by counter item; empty when
    it counts the same."""
    changes: dict[str, Counter[str]] = {}
    for counted, sign in ((before, -1), (after, 1)):
        if counted is None:
            continue
        for counter in _counters(counted):
            fields = changes.setdefault(counter, Counter())
            fields[counted.status] += sign
            if counted.attention:
                fields[ATTENTION] += sign
    return {
        counter: {name: value for name, value in fields.items() if value}
        for counter, fields in changes.items()
        if any(fields.values())
    }


def merged(*parts: Changes) -> Changes:
    """The changes of ``parts`` added up, by item and field; those that cancel out left out. A
    fire total's minute item of the release before (``#fires#<scope>#m<minute>``, from a tab it
    left open) is added as the minute's fields of its hour item."""
    total: dict[str, Counter[str]] = {}
    for changes in parts:
        for item, fields in changes.items():
            minute = _MINUTE_ITEM.fullmatch(item)
            if minute is not None:
                number = int(minute[2])
                item = f"{minute[1]}h{number // 60}"
                fields = {minute_field(name, number): value for name, value in fields.items()}
            total.setdefault(item, Counter()).update(fields)
    return {
        item: {name: value for name, value in fields.items() if value}
        for item, fields in sorted(total.items())
        if any(fields.values())
    }


def fire_changes(group: str, occurrence: Occurrence | None) -> Changes:
    """The fire totals' ADDs for an occurrence just recorded: its minute and hour, in all and in
    its group (none for an occurrence that ran nothing)."""
    kind = None if occurrence is None else fire_kind(occurrence)
    if occurrence is None or kind is None:
        return {}
    return fire_changes_at(group, str(kind), to_epoch_ms(occurrence.actual_time) // 60_000)


def fire_changes_at(group: str, kind: str, minute: int) -> Changes:
    """The fire totals' ADDs for a fire of ``kind`` recorded in ``minute`` (since the epoch):
    its hour's item, in all and in its group, each its hour's field and its minute's."""
    fields = {kind: 1, minute_field(kind, minute): 1}
    return {fire_counter_id(scope, True, minute // 60): dict(fields) for scope in (None, group)}


def minute_field(kind: str, minute: int) -> str:
    """The field of an hour's fire-total item that counts the fires of ``kind`` in ``minute``
    (since the epoch, inside that hour): ``<kind>@<minute of the hour, 00-59>``."""
    return f"{kind}{MINUTE_MARK}{minute % 60:02d}"


def tally_of(version: int, occurrence: Occurrence | None) -> str:
    """A record write's ``tally``: its version, and the fire it records (kind and minute)."""
    kind = None if occurrence is None else fire_kind(occurrence)
    if occurrence is None or kind is None:
        return str(version)
    return f"{version} {kind!s} {to_epoch_ms(occurrence.actual_time) // 60_000}"


def fire_counter_id(group: str | None, hourly: bool, number: int) -> str:
    """The fire-count item of one hour (``hourly``; or, as the release before wrote them, one
    minute) since the epoch, all or of a group."""
    scope = "*" if group is None else f"g:{group}"
    return f"{FIRE_PREFIX}{scope}#{'h' if hourly else 'm'}{number}"


def counter_ids(group: str | None, days: range, shards: int) -> list[str]:
    """Every counter item of a scope: day 0 and the expiry days ``days``, each shard."""
    scope = "*" if group is None else f"g:{group}"
    return [
        f"{COUNTER_PREFIX}{scope}#{day}#{shard}" for day in (0, *days) for shard in range(shards)
    ]


def counter_add(table: str, counter: str, fields: dict[str, int]) -> dict[str, Any]:
    """One counter's ADDs as an item of a TransactWriteItems call."""
    names = {f"#f{n}": name for n, name in enumerate(fields)}
    return {
        "Update": {
            "TableName": table,
            "Key": {"id": counter},
            "UpdateExpression": "ADD " + ", ".join(f"#f{n} :v{n}" for n in range(len(fields))),
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": {
                f":v{n}": value for n, value in enumerate(fields.values())
            },
        }
    }
