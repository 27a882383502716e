"""Counter items rebuilt from the records: for a table written before the counters existed
(they start at zero), or to check them.

One consistent Scan of the table (the only one anywhere in tickwork, run by hand) reads every
record and the counter items themselves. The counts of one scope and day are the sum of its
shards' items (the folds of the stream add to shard 0, a purge takes an action off its own
shard: dynamodb_stream_counts). A scope and day whose sum differs from what the records add up
to is written again: the right counts on shard 0, nothing on its other shards — each item
fenced on the counts it was read with, so a counter that a write moved during the recount is
left as it is and reported, and a recount never undoes a write it did not see. Shard 0 keeps
the id of the last fold that added to it (``folded``).

A write the folds have not added yet is in the records and not in the counters: a recount
first folds every write waiting (``CountLagSeconds`` does not hold it back), so that the
counters it compares hold every write before its scan, and a fold after it adds nothing the
scan counted. Run it when nothing writes: a write made during the scan is in the records the
scan read and is folded later too — the recount reports how many the stream took meanwhile
(``writesDuringRecount``), to run it again when quiet.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from tickwork.adapters.clients import AwsClients
from tickwork.adapters.dynamodb_counts import (
    ATTENTION,
    COUNTER_KEYS,
    COUNTER_PREFIX,
    FOLDED,
    counted_as,
    deltas,
)
from tickwork.adapters.dynamodb_stream_counts import DynamoDBStreamCounts
from tickwork.domain.action import Status

__all__ = ["Recount", "recount"]


@dataclass
class Recount:
    actions: int = 0
    counters_checked: int = 0
    counters_fixed: list[str] = field(default_factory=list)
    counters_moved: list[str] = field(default_factory=list)  # a write changed them meanwhile
    folded_first: int = 0  # writes waiting for a fold, added before the scan
    writes_during: int = 0  # writes the stream took during the scan: run it again when quiet

    def as_dict(self) -> dict[str, Any]:
        return {
            "actions": self.actions,
            "countersChecked": self.counters_checked,
            "countersFixed": len(self.counters_fixed),
            "countersMovedMeanwhile": self.counters_moved,
            "foldedFirst": self.folded_first,
            "writesDuringRecount": self.writes_during,
        }


def recount(
    table: Any,
    progress: Callable[[str], None] = lambda _: None,
    dry_run: bool = False,
    clients: AwsClients | None = None,
) -> Recount:
    """Rebuild the counter items of ``table`` (a boto3 Table) from its records, the writes
    waiting for a fold folded first (``dry_run``: only counted, nothing written)."""
    wanted: dict[str, Counter[str]] = {}
    stored: dict[str, dict[str, int]] = {}
    folded: dict[str, Any] = {}
    result = Recount()
    stream = DynamoDBStreamCounts(table.name, table=table, clients=clients)
    if dry_run:
        result.folded_first = stream.waiting()
    else:  # (without a deadline a fold goes on until it has caught up)
        result.folded_first = stream.fold(lag=0).counted
    for item in _scan(table, progress):
        action_id = str(item["id"])
        if action_id.startswith(COUNTER_PREFIX):
            stored[action_id] = {
                name: int(str(value)) for name, value in item.items() if name not in COUNTER_KEYS
            }
            if FOLDED in item:
                folded[action_id] = item[FOLDED]
            continue
        counted = counted_as(item) if "status" in item else None
        if counted is None:
            continue
        result.actions += 1
        for counter, fields in deltas(None, counted).items():
            wanted.setdefault(_first_shard(counter), Counter()).update(fields)
    shards: dict[str, list[str]] = {}
    for counter in stored:
        shards.setdefault(_first_shard(counter), []).append(counter)
    for first in sorted(set(wanted) | set(shards)):
        result.counters_checked += 1
        right = {name: value for name, value in wanted.get(first, Counter()).items() if value}
        found: Counter[str] = Counter()
        for counter in shards.get(first, []):
            found.update(stored[counter])
        if right == {name: value for name, value in found.items() if value}:
            continue
        if dry_run:
            result.counters_fixed.append(first)
            continue
        # the right counts on shard 0; the other shards' counts taken off
        rewrites = [(first, right)] + [
            (c, {}) for c in sorted(shards.get(first, [])) if c != first and any(stored[c].values())
        ]
        moved = []
        for counter, counts in rewrites:
            if not _replace(table, counter, stored.get(counter), counts, folded.get(counter)):
                moved.append(counter)
        if moved:
            result.counters_moved += moved
        else:
            result.counters_fixed.append(first)
    if not dry_run:
        result.writes_during = stream.waiting()
    return result


def _first_shard(counter: str) -> str:
    """The counter item of shard 0 of ``counter``'s scope and day (the folds add there)."""
    return counter.rpartition("#")[0] + "#0"


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


def _replace(
    table: Any,
    counter: str,
    seen: dict[str, int] | None,
    right: dict[str, int],
    folded: Any = None,
) -> bool:
    """Write ``right`` as the counts of ``counter`` if it still holds what was ``seen``, and
    the last fold that added to it is still ``folded`` (kept as it is: the fold's fence)."""
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
        names["#folded"] = FOLDED
        if folded is None:
            parts.append("attribute_not_exists(#folded)")
        else:
            values[":folded"] = folded
            parts.append("#folded = :folded")
        condition = " AND ".join(parts)
    kept = {FOLDED: folded} if folded else {}
    item = {"id": counter, **right, **kept}
    kwargs: dict[str, Any] = {"Item": item, "ConditionExpression": condition}
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
