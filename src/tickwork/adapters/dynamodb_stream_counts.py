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
(``done``) and, while a fold is under way, its ``intent`` (per shard, the last number it
covers), written — fenced on the item's version — before any counter is touched; the fold's
number is that version, greater than every fold's before it. Each counter item's ADD sets
``folded`` to the fold's number, on the condition that it holds no number as great: a fold
that died half way is done again, from its intent, by the next run before anything else (a
counter it reached refuses the ADD), and a fold that overlapped a later one (two runs at once)
never adds behind it. A fold that ends writes its ``done`` with no intent. A fold under way
whose records the stream no longer holds (24 hours) is given up, logged: ``tickwork recount``
rebuilds the counts by status.

Not folded: a write without ``tally`` (an earlier release's, during an upgrade, or a write
that settles a batch's tab of that release: each counted by its own transaction), a write
whose ``tally`` is an earlier version's, and every REMOVE (a purge counts itself in its
transaction; DynamoDB's TTL deletes are by design not counted: dynamodb_counts).

Every status counter change is added to shard 0 of its counter items (the reads add the
shards up): a fold is their one writer, so it needs no spreading, and a fold's changes to
one scope and day are then one item.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
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

__all__ = ["FOLD_AT_ONCE", "TALLY_ITEM_ID", "DynamoDBStreamCounts", "Folded", "write_changes"]

TALLY_ITEM_ID = "#tally"  # the folds' progress; no action id can start with "#"
_DESERIALIZER = TypeDeserializer()
_PAGE = 1000  # GetRecords' most
_EMPTY_PAGES = 20  # empty pages read past before a fold under way's end is taken as gone
# Writes waiting that are folded at once, whatever the lag: a fold's own writes are then a
# small share of theirs.
FOLD_AT_ONCE = 1000
# A stream record read: its sequence number, its changes (None: a write of the stack's own
# items) and when it was made (epoch seconds).
_Taken = tuple[str, Changes | None, float | None]
log = logging.getLogger("tickwork")


@dataclass
class Folded:
    """What one run of folds did."""

    folds: int = 0
    records: int = 0  # stream records read
    counted: int = 0  # of them, writes that changed a count or a total
    counters: int = 0  # counter items given an ADD
    replayed: bool = False  # the run did again a fold that had died half way
    caught_up: bool = True  # False: it stopped at its limit with more to read
    waiting: int = 0  # writes left for a later run: the oldest younger than the lag

    def as_dict(self) -> dict[str, Any]:
        return {
            "folds": self.folds,
            "records": self.records,
            "counted": self.counted,
            "counters": self.counters,
            "replayed": self.replayed,
            "caughtUp": self.caught_up,
            "waiting": self.waiting,
        }


@dataclass
class _Progress:
    """The ``#tally`` item as read. Sequence numbers are kept as DynamoDB Streams gives them
    (text: up to 40 digits, more than a DynamoDB number holds) and compared as integers."""

    version: int
    done: dict[str, str]  # shard id -> last sequence number folded
    intent: dict[str, str] | None  # the fold under way: shard id -> last number it covers

    @classmethod
    def of(cls, item: dict[str, Any] | None) -> _Progress:
        if item is None:
            return cls(0, {}, None)
        intent = item.get("intent")
        return cls(
            int(str(item.get("version", 0))),
            {str(k): str(v) for k, v in (item.get("done") or {}).items()},
            None if not intent else {str(k): str(v) for k, v in intent.items()},
        )


@dataclass
class _Shard:
    id: str
    parent: str | None
    closed: bool


@dataclass
class _Read:
    to: dict[str, str] = field(default_factory=dict)
    changes: list[Changes] = field(default_factory=list)
    records: int = 0
    actions: int = 0  # of them, writes of actions' records (not of the stack's own items)
    more: bool = False  # it stopped at its limit with more to read
    listed: set[str] = field(default_factory=set)  # the stream's shards now
    oldest: float | None = None  # when the oldest action write read was made (epoch seconds)


class _Gone(Exception):
    """The stream no longer holds the records a fold under way covered (past its 24 hours)."""


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

    def fold(
        self,
        limit: int = 10_000,
        deadline: float | None = None,
        lag: float = 0.0,
        now: float | None = None,
    ) -> Folded:
        """Fold what the stream took since the last fold, in folds of up to ``limit`` records,
        until it is caught up or ``deadline`` (``time.monotonic()``) has passed. With ``lag``
        (seconds), writes are left for a later run while the oldest of them was made less than
        ``lag`` before ``now`` (``time.time()``) and they are fewer than ``FOLD_AT_ONCE``: a
        fold's own writes (its progress, each counter) are then shared by more of them."""
        result = Folded()
        while True:
            progress = _Progress.of(self._progress_item())
            if progress.intent is not None:  # a fold that died: done again first
                result.counters += self._replay(progress)
                result.replayed = True
                continue  # its end written (or moved on by another fold): read again
            read = self._read(progress.done, limit)
            result.records += read.records
            if not read.more and not read.actions:
                # Nothing, or only writes of the stack's own items (the counters, this item):
                # left as they are, read again next time. Writing them done would be a write
                # on the stream each run, for the next run to read.
                return result
            if lag > 0 and not read.more and read.actions < FOLD_AT_ONCE:
                moment = time.time() if now is None else now
                if read.oldest is not None and read.oldest > moment - lag:
                    result.waiting = read.actions
                    result.caught_up = True  # all read: what is left waits for the lag
                    return result
            # shards gone from the stream (24 hours after they closed) are forgotten
            done = {k: v for k, v in progress.done.items() if k in read.listed}
            number = progress.version + 1  # this fold's: greater than every fold's before
            if not self._write_progress(progress.version, done, read.to):
                continue  # another fold moved on meanwhile: read its progress again
            result.folds += 1
            result.counted += sum(1 for changes in read.changes if changes)
            result.counters += self._add(read.changes, number)
            self._write_progress(number, {**done, **read.to}, None)  # done: its intent gone
            result.caught_up = not read.more
            if not read.more or (deadline is not None and time.monotonic() > deadline):
                return result

    def waiting(self) -> int:
        """The writes of actions the stream holds that no fold has added yet (a fold under way
        that died counts as one), read without folding them."""
        progress = _Progress.of(self._progress_item())
        if progress.intent is not None:
            return 1 + self._read(progress.intent, 10_000).actions
        return self._read(progress.done, 10_000).actions

    def _replay(self, progress: _Progress) -> int:
        """Do again the fold under way (it died after its intent): its counters that already
        took its ADD refuse it, the others take it; then write it done."""
        assert progress.intent is not None
        number = progress.version
        try:
            changes = self._covered(progress.done, progress.intent)
        except _Gone:
            # Past the stream's 24 hours: what it had not added is lost (`tickwork recount`
            # rebuilds the counts by status); the folds go on from where it ended.
            log.error("a fold under way could not be done again: its records are gone")
            changes = []
        added = self._add(changes, number)
        self._write_progress(number, {**progress.done, **progress.intent}, None)
        return added

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
                    _Shard(str(shard["ShardId"]), shard.get("ParentShardId"), ending is not None)
                )
            last = described.get("LastEvaluatedShardId")
            if not last:
                return shards
            kwargs["ExclusiveStartShardId"] = last

    def _covered(self, done: dict[str, str], upto: dict[str, str]) -> list[Changes]:
        """The changes of a fold under way: in each shard it covers, the records after
        ``done`` up to its number, every one of them (``_Gone``: some are no longer held)."""
        read = _Read()
        for shard, end in sorted(upto.items()):
            taken, _ = self._records(shard, done.get(shard), end, None)
            if not taken or int(taken[-1][0]) != int(end):
                raise _Gone(shard)
            self._take(read, shard, taken)
        return read.changes

    def _read(self, done: dict[str, str], limit: int) -> _Read:
        """The changes of the records after ``done``, up to ``limit`` of them in all, each
        shard's parent's before its own (a child waits until its parent is read to its end)."""
        read = _Read()
        shards = self._shards()
        listed = {shard.id: shard for shard in shards}
        read.listed = set(listed)
        finished: set[str] = set()
        for shard in _parents_first(shards):
            if shard.parent in listed and shard.parent not in finished:
                continue  # its parent's records come first: a later fold
            room = limit - read.records
            if room <= 0:
                read.more = True
                break
            taken, reached_end = self._records(shard.id, done.get(shard.id), None, room)
            self._take(read, shard.id, taken)
            if shard.closed and reached_end:
                finished.add(shard.id)
            elif len(taken) >= room:
                read.more = True
        return read

    @staticmethod
    def _take(read: _Read, shard: str, taken: list[_Taken]) -> None:
        for number, changes, made in taken:
            read.changes.append(changes or {})
            read.to[shard] = number
            read.records += 1
            read.actions += changes is not None
            if changes is not None and made is not None:
                read.oldest = made if read.oldest is None else min(read.oldest, made)

    def _iterator(self, shard: str, after: str | None) -> str | None:
        """An iterator after ``after`` (from the oldest record the stream still holds when it
        holds none that old); None: the shard is gone."""
        kwargs: dict[str, Any] = {"StreamArn": self._arn(), "ShardId": shard}
        if after is not None:
            kwargs.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=after)
        else:
            kwargs["ShardIteratorType"] = "TRIM_HORIZON"
        try:
            found = self._streams().get_shard_iterator(**kwargs).get("ShardIterator")
            return None if found is None else str(found)
        except ClientError as error:
            code = error.response["Error"]["Code"]
            if code == "TrimmedDataAccessException" and after is not None:
                return self._iterator(shard, None)  # what followed it is all still unread
            if code == "ResourceNotFoundException":
                return None
            raise

    def _records(
        self, shard: str, after: str | None, upto: str | None, room: int | None
    ) -> tuple[list[_Taken], bool]:
        """(sequence number, changes, when it was made) of the shard's records after ``after``,
        up to ``upto`` or ``room`` of them (changes None: a write of the stack's own items); and
        whether the shard's
        end was reached. Up to ``upto``, empty pages are read past (DynamoDB Streams may answer
        one before records that follow); otherwise the first one ends the reading."""
        iterator = self._iterator(shard, after)
        taken: list[_Taken] = []
        empty = 0
        last = None if upto is None else int(upto)
        while iterator:
            want = _PAGE if room is None else min(_PAGE, room - len(taken))
            if want <= 0:
                return taken, False
            page = self._streams().get_records(ShardIterator=iterator, Limit=want)
            records = page.get("Records", [])
            for record in records:
                number = str(record["dynamodb"]["SequenceNumber"])
                if last is not None and int(number) > last:
                    return taken, False
                own = str(record["dynamodb"]["Keys"]["id"]["S"]).startswith("#")
                made = _epoch_seconds(record["dynamodb"].get("ApproximateCreationDateTime"))
                taken.append((number, None if own else write_changes(record), made))
            if last is not None and taken and int(taken[-1][0]) >= last:
                return taken, False
            iterator = page.get("NextShardIterator")
            empty = 0 if records else empty + 1
            if empty and (last is None or empty > _EMPTY_PAGES):
                return taken, iterator is None  # caught up (an open shard), or its end
        return taken, True

    # --- progress -----------------------------------------------------------------------------
    def _progress_item(self) -> dict[str, Any] | None:
        return self._table.get_item(Key={"id": TALLY_ITEM_ID}, ConsistentRead=True).get("Item")

    def _write_progress(
        self, version: int, done: dict[str, str], intent: dict[str, str] | None
    ) -> bool:
        """Write ``#tally`` as version ``version + 1``, if it is still ``version``: the folds
        read to ``done``, and the one under way (``intent``: up to where), if any."""
        item: dict[str, Any] = {"id": TALLY_ITEM_ID, "version": version + 1, "done": done}
        if intent is not None:
            item["intent"] = intent
        condition = "attribute_not_exists(id)" if version == 0 else "version = :v"
        kwargs: dict[str, Any] = {"Item": item, "ConditionExpression": condition}
        if version:
            kwargs["ExpressionAttributeValues"] = {":v": version}
        try:
            self._table.put_item(**kwargs)
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    # --- the counters -------------------------------------------------------------------------
    def _add(self, changes: list[Changes], number: int) -> int:
        """Each counter item's share of ``changes``, added once by fold ``number``: a counter
        a fold of that number or a later one reached refuses it."""
        added = 0
        for counter, fields in sorted(_unsharded(merged(*changes)).items()):
            names = {f"#f{n}": name for n, name in enumerate(fields)}
            values: dict[str, Any] = {f":v{n}": value for n, value in enumerate(fields.values())}
            names["#folded"] = FOLDED
            values[":fold"] = number
            adds = ", ".join(f"#f{n} :v{n}" for n in range(len(fields)))
            try:
                self._table.update_item(
                    Key={"id": counter},
                    UpdateExpression=f"SET #folded = :fold ADD {adds}",
                    ConditionExpression="attribute_not_exists(#folded) OR #folded < :fold",
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )
            except ClientError as error:
                if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
                continue  # this fold, or a later one, reached it already
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
    if old is not None and str(old.get("version")) == str(new.get("version")):
        return {}  # a write that kept its version wrote no change of its own to count
    before = counted_as(old) if old is not None and "status" in old else None
    changes = deltas(before, counted_as(new))
    if len(fire) == 2:
        group = str(new.get("group", DEFAULT_GROUP))
        changes = merged(changes, fire_changes_at(group, fire[0], int(fire[1])))
    return changes


def _epoch_seconds(moment: Any) -> float | None:
    """A stream record's ``ApproximateCreationDateTime`` (a datetime as boto3 reads it)."""
    if isinstance(moment, datetime):
        return moment.timestamp()
    return None if moment is None else float(moment)


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
