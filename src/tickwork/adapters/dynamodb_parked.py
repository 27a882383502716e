"""ParkedFires over the actions table: the fires whose execution is due for launch, and the
pump's watermarks (``#pump``) that keep its reads short. A parked fire is found one of two ways
(record_keys):

- **By its launch moment**, in the sparse ``Parked`` index, when it was parked to launch within
  ``PARK_INDEX_SECONDS`` of its write (due now: a near fire gathered for its window, a fire
  parked again, one whose window's launch moment had come). Its ``parkShard`` is
  ``<hour of its launch moment>#<0-15>``. A read looks at the hours from the watermark
  (``parkedFrom``: the earliest hour that may still hold a fire due for launch) to the hour of
  ``until``, every shard. The watermark then moves to the earliest hour that still held a due
  fire (fires the caller could not launch are read again next time), else to the hour of five
  minutes ago: a fire parked "due now" by a function whose clock lags by less is still found.
- **By its fire time**, in ``ByStatus`` (its PENDING partitions), when it was parked to launch
  later — the default path of every fire further away than the horizon, which then costs no
  index entry in and out. A fire due at ``e`` is due for launch once the start of its batch
  window less ``LaunchAheadSeconds`` has come (fire.grouping.launch_moment): a read takes, in
  the 8 PENDING partitions, the fire times up to the end of the window ``until +
  LaunchAheadSeconds`` falls in, from a watermark per park shard (``launchedTo``: each fire
  belongs to the shard of ``park_shard_of`` its id, the Parked index's, so a pump worker of a
  shard takes its fires whichever way they are found). The pending fires read there that are
  not parked (started at once, chained, launched already) are passed over by the pump, which
  reads every record it launches. After launching, the pump moves the watermarks it read
  (``advance``) up to that end, but never past a fire it read and did not finish (failed,
  refused, cut off by its limit, handed to a worker whose outcome it does not see, not due
  yet): the next run reads it again. A fire found by fire time was parked more than
  ``PARK_INDEX_SECONDS`` before its launch moment, so no watermark had passed its fire time
  when it was written (the windows are aligned: a window that starts after the launch horizon
  of the write starts at or after the end the watermark reached).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from datetime import datetime, timedelta
from typing import Any

from tickwork.adapters.clients import AwsClients, OnTable
from tickwork.adapters.dynamodb_reads import query_pages
from tickwork.adapters.record_keys import (
    PARK_SHARDS,
    PUMP_ITEM_ID,
    SHARDS,
    park_bucket,
    park_shard,
    park_shard_of,
    status_shard_of,
)
from tickwork.domain.action import Action, Status
from tickwork.domain.batch import window_of
from tickwork.domain.times import from_epoch_ms, to_epoch_ms

__all__ = ["DynamoDBParkedFires"]

# With no watermark yet (a new stack), the pump looks this many hours back before the hour of
# its first run. Nothing is parked to launch in the past: a fire is parked before its launch
# moment, or again due now, and a new stack's pump runs within a minute of its deployment. A
# parked fire an hour older than that is still launched: the reconciler starts a parked fire
# the pump missed. (It was 24: 400 queries in every new stack's first run.)
_FIRST_LOOKBACK = 1
_FIRST_LOOKBACK_MS = _FIRST_LOOKBACK * 3_600_000
# The watermark stays this far behind the pump's now.
_SKEW_MS = 300_000
# The ByStatus watermarks: per PENDING partition, fire times (ms) below which every parked
# fire found there was launched.
_LAUNCHED_TO = "launchedTo"
_DEFAULT_AHEAD = timedelta(minutes=15)
_DEFAULT_WINDOW = timedelta(seconds=20)


def _default_launch_moment(due: datetime) -> datetime:
    return window_of(due, _DEFAULT_WINDOW) - _DEFAULT_AHEAD


def _default_first_not_due(until: datetime) -> datetime:
    return window_of(until + _DEFAULT_AHEAD, _DEFAULT_WINDOW) + _DEFAULT_WINDOW


def _marks_of(stored: dict[str, Any] | None) -> dict[str, int]:
    """The ByStatus watermarks of ``#pump`` as read: park shard (text) -> fire time (ms)."""
    found = (stored or {}).get(_LAUNCHED_TO)
    return {str(k): int(str(v)) for k, v in found.items()} if isinstance(found, dict) else {}


def _ahead_ms(moment: datetime, first_not_due: Callable[[datetime], datetime]) -> int:
    """How far after a launch moment the earliest fire launched at it can be: the first fire
    not due by the moment just before it (the start of its window)."""
    return to_epoch_ms(first_not_due(moment - timedelta(milliseconds=1))) - to_epoch_ms(moment)


class DynamoDBParkedFires(OnTable):
    def __init__(
        self,
        table_name: str,
        table: Any = None,
        clients: AwsClients | None = None,
        launch_moment: Callable[[datetime], datetime] | None = None,
        first_not_due: Callable[[datetime], datetime] | None = None,
    ) -> None:
        """``launch_moment``: when a fire due at a time is due for launch; ``first_not_due``:
        the earliest fire time not due for launch by a moment (fire.grouping's; without them,
        the defaults': 15 minutes ahead of 20 s windows)."""
        super().__init__(table_name, table, clients)
        self._launch_moment = launch_moment or _default_launch_moment
        self._first_not_due = first_not_due or _default_first_not_due
        # the watermarks as the last read found them (``advance`` writes only those that move:
        # a mark read earlier is at most the one stored, and a stored mark only grows)
        self._marks_read: dict[str, int] | None = None

    def due(self, until: datetime, limit: int = 1000) -> list[str]:
        """Ids of the parked fires to launch by ``until``, earliest launch first."""
        return [action_id for _, action_id in self.due_moments(until, limit)]

    @property
    def shards(self) -> range:
        return range(PARK_SHARDS)

    def due_moments(
        self, until: datetime, limit: int = 1000, shard: int | None = None
    ) -> list[tuple[int, str]]:
        """``due``, each id with its launch moment (ms since the epoch); ``shard``: in that
        shard of the Parked index and that PENDING partition only (a pump worker's), the
        watermarks read but left where they are. The Parked index's watermark moves here; the
        ByStatus ones when the caller has launched what it read (``advance``)."""
        until_ms = to_epoch_ms(until)
        stored = self._table.get_item(Key={"id": PUMP_ITEM_ID}, ConsistentRead=True).get("Item")
        self._marks_read = _marks_of(stored)
        found = self._by_launch(stored, until_ms, limit, shard)
        found += self._by_fire_time(self._marks_read, until_ms, limit, shard)
        earliest: dict[str, int] = {}
        for moment, action_id in found:
            earliest[action_id] = min(moment, earliest.get(action_id, moment))
        return sorted((moment, action_id) for action_id, moment in earliest.items())[:limit]

    def advance(
        self, until: datetime, held: list[tuple[int, str | None]], shard: int | None = None
    ) -> None:
        """After a run that read ``due_moments(until, shard=shard)`` and launched what it could:
        move the watermarks of the park shards it read (every one, or ``shard``) up to the end
        of what was due by ``until`` — each shard not past the earliest fire of that shard in
        ``held`` (launch moment, id; an id of None holds every shard): those the run read and
        did not finish are read again next time. One write, of the watermarks that move (each
        only forward); none when none moves."""
        through = self._through(to_epoch_ms(until))
        shards = list(self.shards) if shard is None else [shard]
        marks = dict.fromkeys(shards, through)
        for moment, action_id in held:  # a fire of that moment is due at or after its window
            at = from_epoch_ms(moment)
            hold = moment + _ahead_ms(at, self._first_not_due)
            for k in shards if action_id is None else [park_shard_of(action_id)]:
                if k in marks:
                    marks[k] = min(marks[k], hold)
        known = self._marks_read
        if known is None:
            stored = self._table.get_item(Key={"id": PUMP_ITEM_ID}, ConsistentRead=True)
            known = _marks_of(stored.get("Item"))
        moving = {k: m for k, m in marks.items() if str(k) not in known or known[str(k)] < m}
        if moving:
            self._move_launched_to(moving)

    def passed(self, parked: list[Action]) -> set[str]:
        """The far-parked fires whose fire time is below the ByStatus watermark of their park
        shard (``launchedTo``)."""
        far = [a for a in parked if a.parked_far]
        if not far:
            return set()
        stored = self._table.get_item(Key={"id": PUMP_ITEM_ID}, ConsistentRead=True)
        marks = _marks_of(stored.get("Item"))
        return {
            a.id
            for a in far
            if a.execution_time is not None
            and to_epoch_ms(a.execution_time) < marks.get(str(park_shard_of(a.id)), -1)
        }

    def nothing_due_until(self, until: datetime) -> None:
        """Move the watermarks as a ``due(until)`` that found nothing would, without its reads:
        for a caller that knows no fire is parked to launch by ``until`` (the local stack's
        virtual time, leaving out the pump runs that would have found nothing)."""
        mark = park_bucket(to_epoch_ms(until) - _SKEW_MS)
        conflict = self._table.meta.client.exceptions.ConditionalCheckFailedException
        with suppress(conflict):  # one write, only forward: a watermark at or past it stays
            self._table.update_item(
                Key={"id": PUMP_ITEM_ID},
                UpdateExpression="SET parkedFrom = :mark",
                ConditionExpression="attribute_not_exists(parkedFrom) OR parkedFrom < :mark",
                ExpressionAttributeValues={":mark": mark},
            )
        self.advance(until, [])

    # --- the Parked index: by launch moment ---------------------------------------------------
    def _by_launch(
        self, stored: dict[str, Any] | None, until_ms: int, limit: int, shard: int | None
    ) -> list[tuple[int, str]]:
        last = park_bucket(until_ms)
        first = (
            int(str(stored["parkedFrom"]))
            if stored and "parkedFrom" in stored
            else last - _FIRST_LOOKBACK
        )
        found: list[tuple[int, str]] = []
        earliest: int | None = None
        for bucket in range(first, last + 1):
            for each in self.shards if shard is None else (shard,):
                for item in self._parked_in(park_shard(bucket, each), until_ms, limit):
                    found.append((int(str(item["launchAt"])), str(item["id"])))
                    earliest = bucket if earliest is None else earliest
            if len(found) >= limit:
                break
        settled = park_bucket(until_ms - _SKEW_MS)
        mark = max(min(earliest, settled) if earliest is not None else settled, first)
        if shard is None and (stored is None or "parkedFrom" not in stored or mark != first):
            self._table.update_item(  # only when it moves; the ByStatus marks are kept
                Key={"id": PUMP_ITEM_ID},
                UpdateExpression="SET parkedFrom = :mark",
                ExpressionAttributeValues={":mark": mark},
            )
        return found

    def _parked_in(self, key: str, until_ms: int, want: int) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "IndexName": "Parked",
            "KeyConditionExpression": "parkShard = :k AND launchAt <= :until",
            "ExpressionAttributeValues": {":k": key, ":until": until_ms},
        }
        found: list[dict[str, Any]] = []
        for items in query_pages(self._table, kwargs):
            found += items
            if len(found) >= want:
                break
        return found

    # --- ByStatus: by fire time ---------------------------------------------------------------
    def _through(self, until_ms: int) -> int:
        """The first fire time (ms) not due for launch by ``until_ms``."""
        return to_epoch_ms(self._first_not_due(from_epoch_ms(until_ms)))

    def _by_fire_time(
        self, marks: dict[str, int], until_ms: int, limit: int, shard: int | None
    ) -> list[tuple[int, str]]:
        """The fires due by ``until_ms`` in ByStatus's PENDING partitions, from the watermark of
        each fire's park shard on (``shard``: that park shard's fires only, as the Parked
        index's shards are a worker's: a fire is one worker's whichever way it is found)."""
        through = self._through(until_ms)
        mine = list(self.shards) if shard is None else [shard]
        first = through - _FIRST_LOOKBACK_MS
        unmarked = [k for k in mine if str(k) not in marks]
        if shard is None and unmarked:  # a new stack's first run: from an hour back on
            self._move_launched_to(dict.fromkeys(unmarked, first))
        start = min(marks.get(str(k), first) for k in mine)
        if start >= through:
            return []
        found: list[tuple[int, str]] = []
        for partition in range(SHARDS):
            kwargs: dict[str, Any] = {
                "IndexName": "ByStatus",
                "KeyConditionExpression": "statusShard = :k AND executionTime BETWEEN :a AND :b",
                "ExpressionAttributeValues": {
                    ":k": status_shard_of(Status.PENDING, partition),
                    ":a": start,
                    ":b": through - 1,
                },
            }
            taken = 0
            for items in query_pages(self._table, kwargs):
                for item in items:
                    action_id, fire_ms = str(item["id"]), int(str(item["executionTime"]))
                    own = park_shard_of(action_id)
                    if (shard is not None and own != shard) or fire_ms < marks.get(str(own), first):
                        continue  # another worker's, or passed by its shard's watermark
                    launch = self._launch_moment(from_epoch_ms(fire_ms))
                    found.append((to_epoch_ms(launch), action_id))
                    taken += 1
                if taken >= limit:
                    break
        return found

    def _move_launched_to(self, marks: dict[int, int], again: bool = True) -> None:
        """The watermarks of these park shards to these fire times, each only forward: one
        write (a shard already past its mark — a worker of a run before — then moves on its
        own)."""
        client = self._table.meta.client
        names = {"#l": _LAUNCHED_TO, **{f"#k{k}": str(k) for k in marks}}
        try:
            self._table.update_item(
                Key={"id": PUMP_ITEM_ID},
                UpdateExpression="SET " + ", ".join(f"#l.#k{k} = :m{k}" for k in marks),
                ConditionExpression=" AND ".join(
                    f"(attribute_not_exists(#l.#k{k}) OR #l.#k{k} < :m{k})" for k in marks
                ),
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={f":m{k}": mark for k, mark in marks.items()},
            )
        except client.exceptions.ConditionalCheckFailedException:
            if len(marks) > 1:
                for k, mark in marks.items():
                    self._move_launched_to({k: mark})
        except client.exceptions.ClientError as error:
            # no map yet (a new stack, or the item as the release before left it): made whole
            if error.response["Error"]["Code"] != "ValidationException" or not again:
                raise
            with suppress(client.exceptions.ConditionalCheckFailedException):
                self._table.update_item(
                    Key={"id": PUMP_ITEM_ID},
                    UpdateExpression="SET #l = :marks",
                    ConditionExpression="attribute_not_exists(#l)",
                    ExpressionAttributeNames={"#l": _LAUNCHED_TO},
                    ExpressionAttributeValues={":marks": {str(k): m for k, m in marks.items()}},
                )
                return
            self._move_launched_to(marks, again=False)  # made meanwhile
