"""Write units a table write spends on the table's global secondary indexes, by DynamoDB's rules.

A write to a table item touches an index when the item enters it (its index keys appear: one
put), leaves it (one delete), is re-keyed in it (a key attribute changes: a delete and a put),
or stays with the same keys but changes an attribute the index projects (one put of the entry,
sized on the larger of the entries before and after). An entry is sized as its table key, its
index keys and its projected attributes plus 100 bytes of overhead; each write to it costs a
write unit per KB, at least one. The indexes are read from template.yaml, so what the stack
deploys is what is billed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tickwork.adapters.dynamodb_sizes import item_size
from tickwork_local.template import load_yaml

__all__ = ["ENTRY_OVERHEAD", "IndexSpec", "index_write_units", "table_indexes"]

ENTRY_OVERHEAD = 100  # bytes DynamoDB adds to each index entry (its sizing rule)
TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"


@dataclass(frozen=True)
class IndexSpec:
    name: str
    keys: tuple[str, ...]  # the index's partition key, then its sort key
    projection: str  # KEYS_ONLY, INCLUDE or ALL
    projected: tuple[str, ...] = ()  # INCLUDE's non-key attributes

    def entry(self, item: dict[str, Any] | None, table_keys: tuple[str, ...]) -> dict[str, Any]:
        """The item's entry in this index; empty when the item lacks an index key (sparse)."""
        if item is None or any(key not in item for key in self.keys):
            return {}
        if self.projection == "ALL":
            return dict(item)
        names = {*table_keys, *self.keys, *self.projected}
        return {name: value for name, value in item.items() if name in names}


def table_indexes(
    logical_id: str = "ActionsTable", template: Path = TEMPLATE
) -> tuple[tuple[str, ...], tuple[IndexSpec, ...]]:
    """(the table's key attributes, its global secondary indexes) as the template declares."""
    properties = load_yaml(template)["Resources"][logical_id]["Properties"]
    table_keys = tuple(key["AttributeName"] for key in properties["KeySchema"])
    specs = []
    for index in properties.get("GlobalSecondaryIndexes", []):
        projection = index.get("Projection", {})
        specs.append(
            IndexSpec(
                index["IndexName"],
                tuple(key["AttributeName"] for key in index["KeySchema"]),
                projection.get("ProjectionType", "ALL"),
                tuple(projection.get("NonKeyAttributes", ())),
            )
        )
    return table_keys, tuple(specs)


def _units(entry: dict[str, Any]) -> int:
    return max(1, math.ceil((item_size(entry) + ENTRY_OVERHEAD) / 1024))


def index_write_units(
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    specs: tuple[IndexSpec, ...],
    table_keys: tuple[str, ...] = ("id",),
) -> dict[str, int]:
    """Each index's write units for one item going from ``before`` to ``after`` (None: absent;
    a refused write has the same item on both sides and costs its indexes nothing)."""
    spent: dict[str, int] = {}
    for spec in specs:
        old, new = spec.entry(before, table_keys), spec.entry(after, table_keys)
        if not old and not new:
            continue
        if not old:
            units = _units(new)  # the item enters the index
        elif not new:
            units = _units(old)  # it leaves it
        elif any(old[key] != new[key] for key in spec.keys):
            units = _units(old) + _units(new)  # re-keyed: a delete and a put
        elif old != new:
            units = max(_units(old), _units(new))  # a projected attribute changed
        else:
            continue
        spent[spec.name] = units
    return spent
