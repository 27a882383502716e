"""Tabs: a batch's counter changes, carried on the records it writes until they are settled.
docs/protocol.md, "Counts and fire totals".

A record a batch writes carries the counter changes of that write (and of the fire it
records: the fire totals) under the batch's tab, in ``uncounted``: ``{tab: [change, ...]}``,
each change ``"<item> <field> <amount>"`` with the item's prefix shortened (``c/`` for
``#count#``, ``f/`` for ``#fires#``), and a change made alike to the scope of all (``*``) and
to the record's own group (``g:<group>``) written once, with the scope ``+``: a fire's changes
come in such pairs, and a record under 1 KB costs one write unit, not two
(``c/+#20814#4 COMPLETED 1`` is ``c/*#20814#4`` and ``c/g:<group>#20814#4``, the group the
record's own ``group``; records of format 1 carry every change on its own: read as they are).

The tab item ``#tab#<tab>`` lists the batch's members (``members``), the ids whose changes
were added already (``settled``) and a ``version`` that every settlement is fenced on; while
the tab is open it holds ``tabShard`` and ``openedAt``, the keys of the sparse ``OpenTabs``
index, where the reconciler finds a tab whose batch ended without settling it. Every
settlement — the batch's own at its end, a retried task's, the reconciler's, or the next write
of one member's record — is one transaction with the counter items' ADDs, conditioned on the
tab's version and adding the ids it counted to ``settled``: no change is added twice, and none
is dropped before it is added.

From format 3 on, a fire total's minute may tell its hour: ``f/+#M29940641 onTime 1`` is that
change to the minute's item (``#m29940641``) and to its hour's (``#h499010``) alike, where the
hour's change is exactly the minute's (a record of one fire carries one text, not two); any
other change is written as it is. This version reads it but does not write it yet
(``TELL_HOURS``): a function of the version before, still running while a stack is upgraded,
would read ``#M`` as an item of its own and count the fire under it. The release after this
one writes it. A record of a format this code does not read is refused here too
(``RecordFormatUnknown``), never read as the nearest one.

Items written before tabs had their own item carried ``countsDue`` (``[tab, change...]``, the
``#count#`` prefix left out): read as a tab that is settled (its batch added it, or no one
will), so the next write drops it, as it did then.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from typing import Any

from tickwork.adapters.dynamodb_counts import COUNTER_PREFIX, FIRE_PREFIX, Changes
from tickwork.adapters.dynamodb_record import READ_FORMATS, format_of
from tickwork.domain.errors import RecordFormatUnknown
from tickwork.domain.identifiers import DEFAULT_GROUP

__all__ = [
    "LEGACY_DUE",
    "OPEN_TABS_INDEX",
    "TAB_PREFIX",
    "TAB_SHARDS",
    "TELL_HOURS",
    "UNCOUNTED",
    "TabState",
    "carried_by",
    "carried_item",
    "open_tab_item",
    "tab_key",
    "tab_of",
    "tab_settlement",
]

UNCOUNTED = "uncounted"
LEGACY_DUE = "countsDue"
TAB_PREFIX = "#tab#"
TAB_SHARDS = 8
OPEN_TABS_INDEX = "OpenTabs"
_KEPT_SECONDS = 7 * 86_400  # a settled tab item expires after a week
_SHORT = ((COUNTER_PREFIX, "c/"), (FIRE_PREFIX, "f/"))
_ALL = "*"  # the scope of every action's counters
_BOTH = "+"  # the scope of a change made alike to all and to the record's own group
_PAIRED_SINCE = 2  # the record format that first wrote a pair once
_HOURS_TOLD_SINCE = 3  # the record format whose minutes tell their hours' changes
TELL_HOURS = False  # written from the release after the one that first reads it (see above)
_MINUTE = re.compile(r"(.*#)m(\d+)")
_TELLING = re.compile(r"(.*#)M(\d+)")  # a minute that tells its hour (format 3 on)


def tab_key(tab: str) -> dict[str, str]:
    return {"id": f"{TAB_PREFIX}{tab}"}


def tab_of(item_id: str) -> str:
    """The tab a tab item is for."""
    return item_id.removeprefix(TAB_PREFIX)


def _shard(tab: str) -> str:
    return f"tabs#{hashlib.sha256(tab.encode()).digest()[0] % TAB_SHARDS}"


@dataclass(frozen=True)
class TabState:
    """A tab item as read: whether it is open, its version, and who is in it."""

    tab: str
    open: bool
    version: int
    members: frozenset[str]
    settled: frozenset[str]

    @classmethod
    def of(cls, item: dict[str, Any]) -> TabState:
        return cls(
            tab=tab_of(str(item["id"])),
            open="tabShard" in item,
            version=int(str(item.get("version", 0))),
            members=frozenset(str(m) for m in item.get("members", ())),
            settled=frozenset(str(s) for s in item.get("settled", ())),
        )


def open_tab_item(tab: str, members: list[str], now_ms: int) -> dict[str, Any]:
    """The item of a tab opened now, listing the batch's members."""
    item: dict[str, Any] = {
        **tab_key(tab),
        "tabShard": _shard(tab),
        "openedAt": now_ms,
        "version": 0,
        "ttl": int(time.time()) + _KEPT_SECONDS,
    }
    if members:
        item["members"] = set(members)
    return item


def tab_settlement(table_name: str, state: TabState, ids: list[str], close: bool) -> dict[str, Any]:
    """The tab item's part of a settlement transaction: the ids counted, the version moved on,
    and (``close``) the tab taken off the open index — only if no one settled it meanwhile."""
    names = {"#v": "version"}
    values: dict[str, Any] = {":v": state.version, ":next": state.version + 1}
    update = "SET #v = :next"
    if ids:
        update += " ADD settled :ids"
        values[":ids"] = set(ids)
    if close:
        update += " REMOVE tabShard"
    return {
        "Update": {
            "TableName": table_name,
            "Key": tab_key(state.tab),
            "UpdateExpression": update,
            "ConditionExpression": "#v = :v AND attribute_exists(tabShard)",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
    }


def carried_by(item: dict[str, Any]) -> dict[str, Changes]:
    """The changes a stored record carries, by tab (legacy ``countsDue`` included)."""
    # Format 1 wrote every change on its own: no scope there is "+".
    version = format_of(item)
    if not isinstance(version, int) or version not in READ_FORMATS:
        raise RecordFormatUnknown(str(item.get("id")), str(version), sorted(READ_FORMATS))
    paired = version >= _PAIRED_SINCE
    hours_told = version >= _HOURS_TOLD_SINCE
    group = str(item.get("group", DEFAULT_GROUP)) if paired else None
    carried = {
        str(tab): _with_hours(_decode(texts, group)) if hours_told else _decode(texts, group)
        for tab, texts in (item.get(UNCOUNTED) or {}).items()
    }
    legacy = _legacy_counts_due(item.get(LEGACY_DUE))
    if legacy is not None:
        carried.setdefault(legacy[0], legacy[1])
    return carried


def carried_item(
    carried: dict[str, Changes], group: str, tell_hours: bool | None = None
) -> dict[str, list[str]] | None:
    """``uncounted`` as stored on a record of ``group`` (None: nothing carried)."""
    tell = TELL_HOURS if tell_hours is None else tell_hours
    stored = {
        tab: _encode(_without_told_hours(changes) if tell else changes, group)
        for tab, changes in sorted(carried.items())
        if changes
    }
    return stored or None


def _without_told_hours(changes: Changes) -> Changes:
    """``changes`` with each minute whose hour's change is exactly its own written as telling
    it (``#M``), that hour's change left out: the only minute of its hour with that field."""
    minutes: dict[tuple[str, str], list[tuple[str, str, int]]] = {}
    for item, fields in changes.items():
        minute = _MINUTE.fullmatch(item) if item.startswith(FIRE_PREFIX) else None
        if minute is None:
            continue
        hour = f"{minute[1]}h{int(minute[2]) // 60}"
        for name, value in fields.items():
            minutes.setdefault((hour, name), []).append((item, minute[1] + "M" + minute[2], value))
    rest = {item: dict(fields) for item, fields in changes.items()}
    for (hour, name), told in minutes.items():
        if len(told) != 1 or changes.get(hour, {}).get(name) != told[0][2]:
            continue
        item, telling, value = told[0]
        del rest[hour][name]
        del rest[item][name]
        rest.setdefault(telling, {})[name] = value
    return {item: fields for item, fields in rest.items() if fields}


def _with_hours(changes: Changes) -> Changes:
    """Changes as read, each minute that tells its hour (``#M``) read as both changes."""
    total: Changes = {}
    for item, fields in changes.items():
        telling = _TELLING.fullmatch(item) if item.startswith(FIRE_PREFIX) else None
        targets = (
            [f"{telling[1]}m{telling[2]}", f"{telling[1]}h{int(telling[2]) // 60}"]
            if telling
            else [item]
        )
        for target in targets:
            into = total.setdefault(target, {})
            for name, value in fields.items():
                into[name] = into.get(name, 0) + value
    return {
        item: {name: value for name, value in fields.items() if value}
        for item, fields in total.items()
        if any(fields.values())
    }


def _encode(changes: Changes, group: str) -> list[str]:
    texts = []
    own = f"g:{group}"
    for item, fields in sorted(changes.items()):
        prefix, scope, rest = _parts(item)
        for name, value in sorted(fields.items()):
            if scope == _ALL and changes.get(f"{prefix}{own}{rest}", {}).get(name) == value:
                texts.append(f"{_shorten(prefix)}{_BOTH}{rest} {name} {value}")
            elif scope == own and changes.get(f"{prefix}{_ALL}{rest}", {}).get(name) == value:
                continue  # told by the pair's "+" change
            else:
                texts.append(f"{_shorten(item)} {name} {value}")
    return texts


def _decode(texts: Any, group: str | None) -> Changes:
    """``group``: the record's, when it may carry paired changes (format 2 on)."""
    changes: Changes = {}
    for text in texts or ():
        item, name, value = str(text).rsplit(" ", 2)
        prefix, scope, rest = _parts(_lengthen(item))
        scopes = (_ALL, f"g:{group}") if scope == _BOTH and group is not None else (scope,)
        for each in scopes:
            changes.setdefault(f"{prefix}{each}{rest}", {})[name] = int(value)
    return changes


def _parts(item: str) -> tuple[str, str, str]:
    """A counter item's id as (prefix, scope, the rest from its first ``#`` after the scope);
    an id of no known prefix as ("", "", itself)."""
    for prefix, _ in _SHORT:
        if item.startswith(prefix):
            scope, mark, rest = item.removeprefix(prefix).partition("#")
            return prefix, scope, mark + rest
    return "", "", item


def _shorten(item: str) -> str:
    for prefix, short in _SHORT:
        if item.startswith(prefix):
            return short + item.removeprefix(prefix)
    return item


def _lengthen(item: str) -> str:
    for prefix, short in _SHORT:
        if item.startswith(short):
            return prefix + item.removeprefix(short)
    return item


def _legacy_counts_due(stored: Any) -> tuple[str, Changes] | None:
    """``countsDue`` as written before tabs had an item: ``[tab, "<counter> <field> <n>"...]``
    (the ``#count#`` prefix left out), or an earlier map of ``tab`` and ``adds``."""
    if isinstance(stored, dict) and "tab" in stored:
        adds = {
            str(counter): {str(name): int(str(value)) for name, value in fields.items()}
            for counter, fields in stored.get("adds", {}).items()
        }
        return str(stored["tab"]), adds
    if not isinstance(stored, list) or not stored:
        return None
    changes: Changes = {}
    for text in stored[1:]:
        counter, name, value = str(text).rsplit(" ", 2)
        changes.setdefault(COUNTER_PREFIX + counter, {})[name] = int(value)
    return str(stored[0]), changes
