"""The counts and fire totals, added from the actions table's stream: docs/protocol.md,
"Counts and fire totals".

A record write moves no counter itself: it is one plain conditional put (one write unit a KB)
whose ``tally`` says which version it wrote and which fire it recorded, if any
(``"<version>"`` or ``"<version> <kind> <minute>"``, dynamodb_counts.tally_of). The table's
stream (``NEW_AND_OLD_IMAGES``) holds every write once, in order for each item. A fold reads
what the stream took since the last fold and adds, per counter item, the sum of the writes'
changes: what each moved its action from (the old image) and to (the new), and the fire it
recorded (``write_changes``). A busy minute's hundred writes to one counter are one ADD.

Exactly once: the ``#tally`` item holds, per stream shard, the last sequence number folded
(``done``) and the fold under way (``intent``: its id and, per shard, the last number it
covers), written — fenced on the item's version — before any counter is touched. Each counter
item's ADD sets ``folded`` to the fold's id, on the condition that it is not that id already.
A fold that died half way is done again, from its intent, by the next run before anything
else: a counter it reached is passed over, the others get their ADD. Folds follow one another
(the next one's intent is written only once the last one's is done), so one id per counter
item tells all that is needed.

Not folded: a write without ``tally`` (an earlier release's, during an upgrade, or a write
that settles a batch's tab of that release: each counted by its own transaction), a write
whose ``tally`` is an earlier version's, and every REMOVE (a purge counts itself in its
transaction; DynamoDB's TTL deletes are by design not counted: dynamodb_counts).

Every status counter change is added to shard 0 of its counter items (the reads add the
shards up): a fold is their one writer, so it needs no spreading, and a fold's changes to
one scope and day are then one item.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import ClientError

from tickwork.adapters.clients import AwsClients, OnTable
from tickwork.adapters.dynamodb_counts import (
    COUNTER_PREFIX,
    FOLDED,
    TALLY,
    Changes,
    counted_as,
    deltas,
    fire_changes_at,
    merged,
)
from tickwork.domain.identifiers import DEFAULT_GROUP

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = ["TALLY_ITEM_ID", "DynamoDBStreamCounts", "Folded", "write_changes"]

TALLY_ITEM_ID = "#tally"  # the folds' progress; no action id can start with "#"
_DESERIALIZER = TypeDeserializer()
_PAGE = 1000  # GetRecords' most


@dataclass
class Folded:
    """What one run of folds did."""

    folds: int = 0
    records: int = 0  # stream records read
    counted: int = 0  # of them, writes that changed a count or a total
    counters: int = 0  # counter items given an ADD
    replayed: bool = False  # the run first did again a fold that had died half way
    caught_up: bool = True  # False: it stopped at its limit with more to read

    def as_dict(self) -> dict[str, Any]:
        return {
            "folds": self.folds,
            "records": self.records,
            "counted": self.counted,
            "counters": self.counters,
            "replayed": self.replayed,
            "caughtUp": self.caught_up,
        }


@dataclass
class _Progress:
    version: int
    done: dict[str, int]  # shard id -> last sequence number folded
    intent: dict[str, Any] | None  # {"id": str, "to": {shard: number}}

    @classmethod
    def of(cls, item: dict[str, Any] | None) -> _Progress:
        if item is None:
            return cls(0, {}, None)
        intent = item.get("intent")
        return cls(
            int(str(item.get("version", 0))),
            {str(k): int(str(v)) for k, v in (item.get("done") or {}).items()},
            None
            if not intent
            else {
                "id": str(intent["id"]),
                "to": {str(k): int(str(v)) for k, v in intent["to"].items()},
            },
        )


@dataclass
class _Shard:
    id: str
    parent: str | None
    ending: int | None  # None: still open


@dataclass
class _Read:
    to: dict[str, int] = field(default_factory=dict)
    changes: list[Changes] = field(default_factory=list)
    records: int = 0
    actions: int = 0  # of them, writes of actions' records (not of the stack's own items)
    more: bool = False
    listed: set[str] = field(default_factory=set)  # the stream's shards now


class DynamoDBStreamCounts(OnTable):
    """Folds the actions table's stream into its counter items (the count function's job)."""

    def __init__(
        self,
        table_name: str,
        table: Table | None = None,
        clients: AwsClients | None = None,
    ) -> None:
        super().__init__(table_name, table, clients)
        self._stream_arn: str | None = None

    def fold(self, limit: int = 10_000, deadline: float | None = None) -> Folded:
        """Fold what the stream took since the last fold, in folds of up to ``limit`` records,
        until it is caught up or ``deadline`` (``time.monotonic()``) has passed."""
        result = Folded()
        while True:
            progress = _Progress.of(self._progress_item())
            if progress.intent is not None:  # the last fold: done again, or seen done
                read = self._read(progress.done, progress.intent["to"], limit=None)
                result.counters += self._add(read.changes, progress.intent["id"])
                result.replayed = result.replayed or result.folds == 0
                progress.done.update(progress.intent["to"])
            read = self._read(progress.done, None, limit)
            result.records += read.records
            if not read.more and not read.actions:
                # Nothing, or only writes of the stack's own items (the counters, this item):
                # left as they are, read again next time. Writing them done would be a write
                # on the stream each run, for the next run to read.
                self._close(progress)
                return result
            fold_id = uuid.uuid4().hex
            # shards gone from the stream (24 hours after they closed) are forgotten
            progress.done = {k: v for k, v in progress.done.items() if k in read.listed}
            if not self._begin(progress, fold_id, read.to):
                continue  # another fold moved on meanwhile: read its progress again
            result.folds += 1
            result.counted += sum(1 for changes in read.changes if changes)
            result.counters += self._add(read.changes, fold_id)
            result.caught_up = not read.more
            if not read.more or (deadline is not None and time.monotonic() > deadline):
                return result

    # --- the stream ---------------------------------------------------------------------------
    def _arn(self) -> str:
        if self._stream_arn is None:
            described = self._table.meta.client.describe_table(TableName=self._name)
            arn = described["Table"].get("LatestStreamArn")
            if not arn:
                raise RuntimeError(
                    f"table {self._name} has no stream: its StreamSpecification "
                    "(NEW_AND_OLD_IMAGES, template.yaml) is what the counts are folded from"
                )
            self._stream_arn = str(arn)
        return self._stream_arn

    def _streams(self) -> Any:
        return self._clients.client("dynamodbstreams")

    def _shards(self) -> list[_Shard]:
        shards: list[_Shard] = []
        kwargs: dict[str, Any] = {"StreamArn": self._arn()}
        while True:
            described = self._streams().describe_stream(**kwargs)["StreamDescription"]
            for shard in described.get("Shards", []):
                ending = shard.get("SequenceNumberRange", {}).get("EndingSequenceNumber")
                shards.append(
                    _Shard(
                        str(shard["ShardId"]),
                        shard.get("ParentShardId"),
                        None if ending is None else int(ending),
                    )
                )
            last = described.get("LastEvaluatedShardId")
            if not last:
                return shards
            kwargs["ExclusiveStartShardId"] = last

    def _read(self, done: dict[str, int], upto: dict[str, int] | None, limit: int | None) -> _Read:
        """The changes of the records after ``done``: in each shard of ``upto`` up to its
        number (a fold done again), or up to ``limit`` records in all, each shard's parent's
        before its own (a new fold)."""
        read = _Read()
        if upto is not None:
            for shard_id, end in sorted(upto.items()):
                taken, _ = self._records(shard_id, done.get(shard_id), end, None)
                self._take(read, shard_id, taken)
            return read
        shards = self._shards()
        listed = {shard.id: shard for shard in shards}
        read.listed = set(listed)
        finished: set[str] = set()
        for shard in _parents_first(shards):
            if shard.parent in listed and shard.parent not in finished:
                read.more = True
                continue  # its parent's records come first: the next fold
            room = None if limit is None else limit - read.records
            if room is not None and room <= 0:
                read.more = True
                break
            taken, reached_end = self._records(shard.id, done.get(shard.id), None, room)
            self._take(read, shard.id, taken)
            if shard.ending is not None and reached_end:
                finished.add(shard.id)
            elif not reached_end and room is not None and len(taken) >= room:
                read.more = True
        return read

    @staticmethod
    def _take(read: _Read, shard: str, taken: list[tuple[int, Changes | None]]) -> None:
        for number, changes in taken:
            read.changes.append(changes or {})
            read.to[shard] = number
            read.records += 1
            read.actions += changes is not None

    def _records(
        self, shard: str, after: int | None, upto: int | None, room: int | None
    ) -> tuple[list[tuple[int, Changes | None]], bool]:
        """(sequence number, changes) of the shard's records after ``after``, up to ``upto``
        or ``room`` of them (None: a write of the stack's own items); and whether the shard's
        end was reached."""
        kwargs: dict[str, Any] = {"StreamArn": self._arn(), "ShardId": shard}
        if after is None:
            kwargs["ShardIteratorType"] = "TRIM_HORIZON"
        else:
            kwargs.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=str(after))
        iterator = self._streams().get_shard_iterator(**kwargs).get("ShardIterator")
        taken: list[tuple[int, Changes | None]] = []
        while iterator:
            want = _PAGE if room is None else min(_PAGE, room - len(taken))
            if want <= 0:
                return taken, False
            page = self._streams().get_records(ShardIterator=iterator, Limit=want)
            records = page.get("Records", [])
            for record in records:
                number = int(record["dynamodb"]["SequenceNumber"])
                if upto is not None and number > upto:
                    return taken, False
                own = str(record["dynamodb"]["Keys"]["id"]["S"]).startswith("#")
                taken.append((number, None if own else write_changes(record)))
            if upto is not None and taken and taken[-1][0] >= upto:
                return taken, False
            iterator = page.get("NextShardIterator")
            if not records:
                return taken, iterator is None  # caught up (an open shard), or its end
        return taken, True

    # --- progress -----------------------------------------------------------------------------
    def _progress_item(self) -> dict[str, Any] | None:
        return self._table.get_item(Key={"id": TALLY_ITEM_ID}, ConsistentRead=True).get("Item")

    def _begin(self, progress: _Progress, fold_id: str, to: dict[str, int]) -> bool:
        """Write the fold's intent (and the last one's end), fenced on the item's version."""
        return self._write_progress(progress, {"id": fold_id, "to": to})

    def _close(self, progress: _Progress) -> None:
        """Caught up: a fold done again is written done (its intent removed)."""
        if progress.intent is not None:
            self._write_progress(progress, None)

    def _write_progress(self, progress: _Progress, intent: dict[str, Any] | None) -> bool:
        item: dict[str, Any] = {
            "id": TALLY_ITEM_ID,
            "version": progress.version + 1,
            "done": dict(progress.done),
        }
        if intent is not None:
            item["intent"] = intent
        condition = "attribute_not_exists(id)" if progress.version == 0 else "version = :v"
        kwargs: dict[str, Any] = {"Item": item, "ConditionExpression": condition}
        if progress.version:
            kwargs["ExpressionAttributeValues"] = {":v": progress.version}
        try:
            self._table.put_item(**kwargs)
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    # --- the counters -------------------------------------------------------------------------
    def _add(self, changes: list[Changes], fold_id: str) -> int:
        """Each counter item's share of ``changes``, added once for ``fold_id``."""
        added = 0
        for counter, fields in sorted(_unsharded(merged(*changes)).items()):
            names = {f"#f{n}": name for n, name in enumerate(fields)}
            values: dict[str, Any] = {f":v{n}": value for n, value in enumerate(fields.values())}
            names["#folded"] = FOLDED
            values[":fold"] = fold_id
            adds = ", ".join(f"#f{n} :v{n}" for n in range(len(fields)))
            try:
                self._table.update_item(
                    Key={"id": counter},
                    UpdateExpression=f"SET #folded = :fold ADD {adds}",
                    ConditionExpression="attribute_not_exists(#folded) OR #folded <> :fold",
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )
            except ClientError as error:
                if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
                continue  # this fold reached it before it died
            added += 1
        return added


def write_changes(record: dict[str, Any]) -> Changes:
    """The counter changes one stream record's write makes (none if it is not folded)."""
    if record.get("eventName") == "REMOVE":
        return {}
    images = record.get("dynamodb", {})
    new = _plain(images.get("NewImage"))
    if new is None or str(new.get("id", "#")).startswith("#") or TALLY not in new:
        return {}
    version, *fire = str(new[TALLY]).split()
    if int(version) != int(str(new.get("version", -1))):
        return {}  # written by another hand over a version that told its own
    old = _plain(images.get("OldImage"))
    before = counted_as(old) if old is not None and "status" in old else None
    changes = deltas(before, counted_as(new))
    if len(fire) == 2:
        group = str(new.get("group", DEFAULT_GROUP))
        changes = merged(changes, fire_changes_at(group, fire[0], int(fire[1])))
    return changes


def _plain(image: dict[str, Any] | None) -> dict[str, Any] | None:
    if not image:
        return None
    return {name: _DESERIALIZER.deserialize(value) for name, value in image.items()}


def _unsharded(changes: Changes) -> Changes:
    """The status counters' changes moved to shard 0 of their items (``#count#<scope>#<day>#0``)."""
    moved: list[Changes] = []
    for counter, fields in changes.items():
        if counter.startswith(COUNTER_PREFIX):
            counter = counter.rpartition("#")[0] + "#0"
        moved.append({counter: fields})
    return merged(*moved)


def _parents_first(shards: list[_Shard]) -> Iterator[_Shard]:
    listed = {shard.id: shard for shard in shards}
    seen: set[str] = set()

    def visit(shard: _Shard) -> Iterator[_Shard]:
        if shard.id in seen:
            return
        seen.add(shard.id)
        if shard.parent and shard.parent in listed:
            yield from visit(listed[shard.parent])
        yield shard

    for shard in shards:
        yield from visit(shard)
