"""DynamoDB request units of the calls a stack made, sized as DynamoDB sizes items.

On-demand pricing bills a write request unit per KB written (an UpdateItem or a PutItem on the
larger of the item before and after; each item of a transaction twice) and a read request unit
per 4 KB read strongly (half for an eventually consistent read). Item sizes follow DynamoDB's
rules: attribute names plus values (a number about one byte per two digits, a list or map three
bytes plus one per element). The record a write puts is sized from the call itself, and the
item it replaces by the put before it (``track``: a one-off's record grows over its few
writes); a read, an update or a delete is sized by the item as the table held it at the end of
the run — or, for a recurring action's record, as it stands once its history and transitions
are full (``aged_size``), which a short run never reaches, and then the floor of every write.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from benchkit.indexes import IndexSpec, index_write_units
from tickwork.adapters.dynamodb_record import from_item, to_item
from tickwork.adapters.dynamodb_sizes import as_typed, item_size

if TYPE_CHECKING:
    from benchkit.recorder import Call

__all__ = ["Sizer", "Units", "aged_size", "call_units", "item_size", "units_of"]

Sizer = Callable[[dict[str, Any]], int]

_SERIALIZER = TypeSerializer()
_DESERIALIZER = TypeDeserializer()
_WRITES = {"PutItem", "UpdateItem", "DeleteItem"}
_SMALL = 100  # a counter, tally, slot or marker item: well under a unit


def _typed(item: dict[str, Any]) -> dict[str, Any]:
    return {name: _SERIALIZER.serialize(value) for name, value in item.items()}


def aged_size(typed_item: dict[str, Any], history: int, transitions: int) -> int:
    """The record's size once its history is full, its latest entry repeated: what every
    write of a recurring action's record costs in steady state. Its transitions stay as they
    are: an ordinary fire makes none (they are what changed the action), so fires do not fill
    them; ``transitions`` (the limit) is kept for callers that size a record of another."""
    del transitions
    plain = {name: _DESERIALIZER.deserialize(value) for name, value in typed_item.items()}
    action = from_item(plain)
    if not action.history:
        return item_size(typed_item)
    aged = replace(action, history=(action.history[-1],) * history)
    return item_size(_typed(to_item(aged)))


class Units:
    """Read and write request units of the calls on one table."""

    def __init__(self, table: str, sizes: dict[str, int], track: bool = False) -> None:
        self.table = table
        self.sizes = sizes  # item id -> its size in bytes (aged, for recurring records)
        # ``track``: a put replaces the item its last put wrote (else the final or aged size)
        self.written: dict[str, int] | None = {} if track else None
        self.reads = 0.0
        self.writes = 0.0

    def add(
        self, operation: str, params: dict[str, Any], items_read: tuple[dict[str, Any], ...] = ()
    ) -> tuple[float, float]:
        reads, writes = units_of(
            operation, params, self.table, self.sizes, items_read, self.written
        )
        self.reads += reads
        self.writes += writes
        return reads, writes


def _id_of(value: Any) -> str:
    return str(as_typed(value).get("S", ""))


def _size_of_key(params: dict[str, Any], sizes: dict[str, int]) -> int:
    return sizes.get(_id_of(params.get("Key", {}).get("id", "")), _SMALL)


def units_of(
    operation: str,
    params: dict[str, Any],
    table: str,
    sizes: dict[str, int],
    items_read: tuple[dict[str, Any], ...] = (),
    written: dict[str, int] | None = None,
) -> tuple[float, float]:
    """(read units, write units) of one DynamoDB call; a Query's or a Scan's by the items it
    read (``items_read``), at least one unit's worth. With ``written`` (each item's size as
    the puts before left it, updated here) a put is billed on the larger of the item it
    replaces and the one it writes, as DynamoDB bills it."""

    def put_size(item: dict[str, Any]) -> int:
        item_id = _id_of(item.get("id", ""))
        size = item_size(item)
        if written is None:
            return max(size, sizes.get(item_id, 0))
        before = written.get(item_id, 0)
        written[item_id] = size
        return max(size, before)

    if params.get("TableName", table) != table and operation != "TransactWriteItems":
        return (0.0, 1.0) if operation in _WRITES else (0.5, 0.0)
    strong = 1.0 if params.get("ConsistentRead") else 0.5
    if operation == "GetItem":
        return strong * max(1, math.ceil(_size_of_key(params, sizes) / 4096)), 0.0
    if operation == "PutItem":
        return 0.0, max(1, math.ceil(put_size(params["Item"]) / 1024))
    if operation in ("UpdateItem", "DeleteItem"):
        return 0.0, max(1, math.ceil(_size_of_key(params, sizes) / 1024))
    if operation == "TransactWriteItems":
        units = 0
        for entry in params["TransactItems"]:
            ((kind, item),) = entry.items()
            size = put_size(item["Item"]) if kind == "Put" else _size_of_key(item, sizes)
            units += 2 * max(1, math.ceil(size / 1024))
        return 0.0, float(units)
    if operation == "BatchGetItem":
        keys = [k for request in params["RequestItems"].values() for k in request["Keys"]]
        return sum(max(1, math.ceil(sizes.get(_id_of(k["id"]), _SMALL) / 4096)) for k in keys), 0.0
    if operation in ("Query", "Scan"):
        read = sum(item_size(item) for item in items_read)
        return strong * max(1, math.ceil(read / 4096)), 0.0
    return 0.0, 0.0


def call_units(
    call: Call,
    table: str,
    indexes: tuple[IndexSpec, ...],
    sizer: Sizer = item_size,
    table_keys: tuple[str, ...] = ("id",),
) -> tuple[float, float, Counter[str]]:
    """(read units, table write units, each index's write units) of one recorded DynamoDB call,
    sized from what it really read and wrote: a write on the larger of its items before and
    after (``sizer`` sizes an item: its stored size, or a recurring record's aged one), twice
    for a transaction's member, at least a unit even when refused; its index writes by
    DynamoDB's rules (benchkit/indexes.py); a read on the items it returned."""
    index_units: Counter[str] = Counter()
    strong = 1.0 if call.params.get("ConsistentRead") else 0.5
    if call.images:
        writes = 0.0
        for image in call.images:
            size = max(
                sizer(image.before) if image.before else 0,
                sizer(image.after) if image.after else 0,
            )
            writes += max(1, math.ceil(size / 1024)) * (2 if image.transactional else 1)
            if image.table == table:
                index_units.update(
                    index_write_units(image.before, image.after, indexes, table_keys)
                )
        return 0.0, writes, index_units
    if call.operation == "GetItem":
        size = sum(sizer(item) for item in call.items_read)
        return strong * max(1, math.ceil(size / 4096)), 0.0, index_units
    if call.operation == "BatchGetItem":
        consistent = any(
            request.get("ConsistentRead") for request in call.params["RequestItems"].values()
        )
        units = sum(max(1, math.ceil(sizer(item) / 4096)) for item in call.items_read)
        return (units if consistent else units / 2), 0.0, index_units
    if call.operation in ("Query", "Scan"):
        read = sum(item_size(item) for item in call.items_read)
        return strong * max(1, math.ceil(read / 4096)), 0.0, index_units
    return 0.0, 0.0, index_units
