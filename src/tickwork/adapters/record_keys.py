"""The keys a record's item carries for the table's indexes (template.yaml declares them):

- ``statusShard`` + ``executionTime`` (ByStatus): one status by next fire; the shard suffix
  spreads a status over partitions, so a million PENDING actions share no hot key. A claimed
  fire (IN_PROGRESS) keeps its PENDING entry: a claim moves no index entry;
- ``groupShard`` + ``id`` (ByGroup) and ``idShard`` + ``id`` (ById): by group and by id
  prefix, in id order; they project no status (a claim or a record rewrites none of them);
- ``attentionShard`` + ``id`` (NeedsAttention): present only while a failed fire waits for a
  retry (a sparse index);
- ``manualShard`` + ``id`` (ManualFires): present only while a fire asked for by hand runs, or
  a backfill waits;
- ``calendarShard`` + ``id`` (ByCalendar): present only while the action is live and its
  schedule names a calendar (``<name>#<shard>``), for a calendar's edit to find the schedules
  it must check and plan again, never by a scan;
- ``launchAt``: present while the next fire is parked — when the pump launches it;
- ``parkShard`` + ``launchAt`` (Parked): present only while the next fire is parked to launch
  within ``PARK_INDEX_SECONDS`` of the write that parked it (due now: a near fire gathered for
  its window, a fire parked again, a fire whose window's launch moment has come). The key is
  the hour the pump launches it in plus a shard: a busy hour is spread over ``PARK_SHARDS``
  partitions, and the pump reads only the hours since its last run (a watermark item,
  ``PUMP_ITEM_ID``). A fire parked to launch later is in no index of its own: the pump finds it
  in ByStatus, by its fire time, from a watermark of its own (``dynamodb_parked``), so such a
  fire costs no index entry in and out. Either way its reads grow with the fires it launches,
  never with the actions stored.
"""

from __future__ import annotations

import hashlib
from typing import Any

from tickwork.domain.action import LIVE, PARK_INDEX_MS, Action, Status
from tickwork.domain.times import to_epoch_ms

__all__ = [
    "PARK_BUCKET_MS",
    "PARK_INDEX_SECONDS",
    "PARK_SHARDS",
    "PUMP_ITEM_ID",
    "SHARDS",
    "calendar_shard",
    "index_keys",
    "indexed_status",
    "park_bucket",
    "park_shard",
    "park_shard_of",
    "shard_of",
    "status_partitions",
    "status_shard",
    "status_shard_of",
]

SHARDS = 8

PARK_SHARDS = 16

PARK_BUCKET_MS = 3_600_000  # an hour of launches per bucket

# A fire parked to launch within this of its write is in the Parked index; one later is found
# by its fire time (dynamodb_parked): by then the pump's watermark on fire times has not passed
# it, whatever the clocks' and the index's lag up to this (the domain's ``Action.parked_far``).
PARK_INDEX_SECONDS = PARK_INDEX_MS // 1000

PUMP_ITEM_ID = "#pump"  # the pump's watermark; no action id can start with "#"


def shard_of(action_id: str) -> int:
    return hashlib.sha256(action_id.encode()).digest()[0] % SHARDS


def status_shard(status: str, action_id: str) -> str:
    return status_shard_of(status, shard_of(action_id))


def status_shard_of(status: str, shard: int) -> str:
    """The ByStatus partition key of ``status`` in shard ``shard`` (0 to SHARDS - 1)."""
    return f"{indexed_status(status)}#{shard}"


def indexed_status(status: str) -> str:
    """The status a record is indexed under: a claimed fire (IN_PROGRESS) stays in its PENDING
    partitions, so that a claim moves no index entry (a query for either reads the records)."""
    return str(Status.PENDING) if status == Status.IN_PROGRESS else status


def status_partitions(status: Status) -> tuple[str, ...]:
    """The ByStatus partitions (before the shard) that may hold records of ``status``: an
    IN_PROGRESS one in PENDING's, or, written before claims stayed there, in its own."""
    if status is Status.IN_PROGRESS:
        return (str(Status.PENDING), str(Status.IN_PROGRESS))
    return (str(status),)


def calendar_shard(name: str, shard: int) -> str:
    return f"{name}#{shard}"  # a calendar name holds no "#"


def park_bucket(epoch_ms: int) -> int:
    return epoch_ms // PARK_BUCKET_MS


def park_shard(bucket: int, shard: int) -> str:
    return f"{bucket}#{shard}"


def park_shard_of(action_id: str) -> int:
    """The shard of the Parked index an action's parked fires are in (0 to PARK_SHARDS - 1)."""
    return int.from_bytes(hashlib.sha256(action_id.encode()).digest()[1:3]) % PARK_SHARDS


def index_keys(action: Action) -> dict[str, Any]:
    """The index keys of the record's item as the action stands (None: the key is left out)."""
    shard = shard_of(action.id)
    return {
        "statusShard": status_shard(str(action.status), action.id),
        "groupShard": f"{action.group}#{shard}",
        "idShard": f"ids#{shard}",
        "attentionShard": f"attention#{shard}" if action.needs_attention else None,
        # indexed while a manual fire runs or a backfill waits: the reconciler looks there
        "manualShard": f"manual#{shard}" if action.manual.in_flight or action.backfill else None,
        "calendarShard": _calendar_key(action, shard),
        **_parked_keys(action),
    }


def _calendar_key(action: Action, shard: int) -> str | None:
    use = action.schedule.calendar
    return None if use is None or action.status not in LIVE else calendar_shard(use.name, shard)


def _parked_keys(action: Action) -> dict[str, Any]:
    if not action.is_parked or action.launch_at is None:
        return {}
    launch_ms = to_epoch_ms(action.launch_at)
    if action.parked_far:
        return {"launchAt": launch_ms}  # found by its fire time (ByStatus)
    shard = park_shard_of(action.id)
    return {"launchAt": launch_ms, "parkShard": park_shard(park_bucket(launch_ms), shard)}
