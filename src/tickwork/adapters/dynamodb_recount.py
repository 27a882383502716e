"""Counter items rebuilt from the records: for a table written before the counters existed
(they start at zero), or to check them.

One consistent Scan of the table (the only one anywhere in tickwork, run by hand) reads every
record and the counter items themselves. Each counter item
whose counts differ from what the records add up to is then written with the right counts,
fenced on the counts it was read with: a counter that a write moved during the recount is left
as it is and reported, so a recount never undoes a write it did not see. Run it again when the
stack is quiet to settle those.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from tickwork.adapters.dynamodb_counts import (
    ATTENTION,
    COUNTER_KEYS,
    COUNTER_PREFIX,
    counted_as,
    deltas,
)
from tickwork.domain.action import Status

__all__ = ["Recount", "recount"]


@dataclass
class Recount:
    actions: int = 0
    counters_checked: int = 0
    counters_fixed: list[str] = field(default_factory=list)
    counters_moved: list[str] = field(default_factory=list)  # a write changed them meanwhile

    def as_dict(self) -> dict[str, Any]:
        return {
            "actions": self.actions,
            "countersChecked": self.counters_checked,
            "countersFixed": len(self.counters_fixed),
            "countersMovedMeanwhile": self.counters_moved,
        }


def recount(
    table: Any, progress: Callable[[str], None] = lambda _: None, dry_run: bool = False
) -> Recount:
    """Rebuild the counter items of ``table`` (a boto3 Table) from its records."""
    wanted: dict[str, Counter[str]] = {}
    stored: dict[str, dict[str, int]] = {}
    result = Recount()
    for item in _scan(table, progress):
        action_id = str(item["id"])
        if action_id.startswith(COUNTER_PREFIX):
            stored[action_id] = {
                name: int(str(value)) for name, value in item.items() if name not in COUNTER_KEYS
            }
            continue
        counted = counted_as(item) if "status" in item else None
        if counted is None:
            continue
        result.actions += 1
        for counter, fields in deltas(None, counted).items():
            wanted.setdefault(counter, Counter()).update(fields)
    for counter in sorted(set(wanted) | set(stored)):
        result.counters_checked += 1
        right = {name: value for name, value in wanted.get(counter, Counter()).items() if value}
        found = {name: value for name, value in stored.get(counter, {}).items() if value}
        if right == found:
            continue
        if dry_run:
            result.counters_fixed.append(counter)
            continue
        if _replace(table, counter, stored.get(counter), right):
            result.counters_fixed.append(counter)
        else:
            result.counters_moved.append(counter)
    return result


_FIELDS = [*(str(status) for status in Status), ATTENTION]  # every count a counter item holds


def _scan(table: Any, progress: Callable[[str], None]) -> Iterator[dict[str, Any]]:
    kwargs: dict[str, Any] = {"ConsistentRead": True}
    read = 0
    while True:
        page = table.scan(**kwargs)
        items = page.get("Items", [])
        read += len(items)
        progress(f"read {read} items")
        yield from items
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _replace(table: Any, counter: str, seen: dict[str, int] | None, right: dict[str, int]) -> bool:
    """Write ``right`` as the counts of ``counter`` if it still holds what was ``seen``."""
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    if seen is None:
        condition = "attribute_not_exists(id)"
    else:
        parts = ["attribute_exists(id)"]
        for n, name in enumerate(_FIELDS):
            names[f"#c{n}"] = name
            if name in seen:
                values[f":c{n}"] = seen[name]
                parts.append(f"#c{n} = :c{n}")
            else:
                parts.append(f"attribute_not_exists(#c{n})")
        condition = " AND ".join(parts)
    kwargs: dict[str, Any] = {"Item": {"id": counter, **right}, "ConditionExpression": condition}
    if names:
        kwargs["ExpressionAttributeNames"] = names
    if values:
        kwargs["ExpressionAttributeValues"] = values
    try:
        table.put_item(**kwargs)
    except ClientError as error:
        if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
            return False
        raise
    return True
