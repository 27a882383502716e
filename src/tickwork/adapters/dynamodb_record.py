"""The action record as a DynamoDB item, and back.

Items keep the seed schema's attribute names (id, action, data, metadata, executionTime in
epoch milliseconds, repeat, frequency, executionRemainder, status, retryCount, createdAt,
updatedAt) beside tickwork's own (schedule with its zone, version, generation, occurrence, ...),
the record's format (``fmt``), and the keys of the table's indexes:

- ``statusShard`` + ``executionTime`` (ByStatus): one status by next fire; the shard suffix
  spreads a status over partitions, so a million PENDING actions share no hot key;
- ``groupShard`` + ``id`` (ByGroup) and ``idShard`` + ``id`` (ById): by group and by id
  prefix, in id order;
- ``attentionShard`` + ``id`` (NeedsAttention): present only while a failed fire waits for a
  retry (a sparse index);
- ``manualShard`` + ``id`` (ManualFires): present only while a fire asked for by hand runs, or
  a backfill waits;
- ``parkShard`` + ``launchAt`` (Parked): present only while the next fire is parked. The key
  is the hour the pump launches it in plus a shard: a busy hour is spread over
  ``PARK_SHARDS`` partitions, and the pump reads only the hours since its last run (a
  watermark item, ``PUMP_ITEM_ID``), so its reads grow with the fires it launches, never with
  the actions stored.

The history and the transitions, most of a busy record, are kept in short names with epoch
milliseconds (``history``: ``o`` occurrence, ``s``/``a`` scheduled and actual time, ``n``
attempts, ``r`` outcome, ``e`` error, ``l`` lateness, ``t`` trigger, ``m`` manual, ``x`` the
execution that ran it, told back from a short code; the scheduled time is left out when the
actual time less the lateness tells it; ``transitions``: ``t`` at, ``f``/``s`` from and to
status as one letter, ``r`` reason): every write of a record costs a write unit per KB of it.
For the same reason ``catchUp`` is left out at its default (ONCE after 60 s) and ``changedAt``
while it equals ``createdAt``; both read back as those.

Formats (``fmt``): none or 1 before; 2 writes a batch's counter changes in pairs
(dynamodb_tabs) and the zone in the schedule only (no top-level ``timezone``): a one-off in a
batch stays under 1 KB through its life. Items of every format stored are read as they are,
long names included.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from tickwork.domain.action import Action, Occurrence, Status, Transition
from tickwork.domain.backfill import Backfilled, BackfillRequest, Overlap
from tickwork.domain.catch_up import CatchUp
from tickwork.domain.fire import Outcome, Trigger
from tickwork.domain.fire_ending import UnknownOutcomePolicy
from tickwork.domain.identifiers import DEFAULT_GROUP
from tickwork.domain.naming import DIGEST_DIGITS, legacy_execution_name, name_with_digest
from tickwork.domain.occurrence_changes import OccurrenceChange
from tickwork.domain.schedule import Schedule
from tickwork.domain.steering import (
    ChangeKind,
    Deferred,
    FailedFire,
    FailurePolicy,
    ManualFire,
    ManualFires,
    MissedFire,
    Pause,
)
from tickwork.domain.times import from_epoch_ms, iso, parse_iso, to_epoch_ms

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "PARK_BUCKET_MS",
    "PARK_SHARDS",
    "PUMP_ITEM_ID",
    "SHARDS",
    "from_item",
    "park_bucket",
    "park_shard",
    "shard_of",
    "status_shard",
    "to_item",
]

# The record's layout, written on every record as ``fmt``: 1 (or none) before, 2 since a batch's
# counter changes carried in pairs (dynamodb_tabs). Readers take every format stored.
FORMAT = "fmt"
FORMAT_VERSION = 2
SHARDS = 8
PARK_SHARDS = 16
PARK_BUCKET_MS = 3_600_000  # an hour of launches per bucket
PUMP_ITEM_ID = "#pump"  # the pump's watermark; no action id can start with "#"


def shard_of(action_id: str) -> int:
    return hashlib.sha256(action_id.encode()).digest()[0] % SHARDS


def status_shard(status: str, action_id: str) -> str:
    return f"{status}#{shard_of(action_id)}"


def park_bucket(epoch_ms: int) -> int:
    return epoch_ms // PARK_BUCKET_MS


def park_shard(bucket: int, shard: int) -> str:
    return f"{bucket}#{shard}"


def _epoch_ms(moment: datetime | None) -> int | None:
    return None if moment is None else to_epoch_ms(moment)


def _to_dynamo(value: dict[str, Any]) -> dict[str, Any]:
    """JSON values to DynamoDB-safe ones (floats become Decimals)."""
    converted: dict[str, Any] = json.loads(json.dumps(value), parse_float=Decimal)
    return converted


def _from_dynamo(value: Any) -> Any:
    """DynamoDB values back to plain JSON types."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_dynamo(v) for v in value]
    return value


def _occurrence_item(occurrence: Occurrence, action_id: str) -> dict[str, Any]:
    """One fire of the history, in short names: the history is most of a busy record, and a
    record's every write costs a write unit per KB of it."""
    actual = to_epoch_ms(occurrence.actual_time)
    scheduled = to_epoch_ms(occurrence.scheduled_time)
    told_by_lateness = (
        occurrence.late_ms is not None
        and from_epoch_ms(actual - occurrence.late_ms) == occurrence.scheduled_time
    )
    return _drop_none(
        {
            "o": occurrence.occurrence,
            "s": None if told_by_lateness else scheduled,  # else actual time less lateness
            "a": actual,
            "n": occurrence.attempts,
            "r": str(occurrence.outcome),
            "e": occurrence.error,
            "l": occurrence.late_ms,
            "t": None if occurrence.trigger is Trigger.SCHEDULED else str(occurrence.trigger),
            "m": occurrence.manual or None,
            "x": _execution_code(occurrence, action_id),
        }
    )


def _occurrence(item: dict[str, Any], action_id: str) -> Occurrence:
    if "o" not in item:  # written before the short names
        return _legacy_occurrence(item)
    occurrence = Occurrence(
        occurrence=item["o"],
        scheduled_time=from_epoch_ms(item["s"] if "s" in item else item["a"] - item["l"]),
        actual_time=from_epoch_ms(item["a"]),
        attempts=item["n"],
        outcome=Outcome(item["r"]),
        error=item.get("e"),
        late_ms=item.get("l"),
        trigger=Trigger(item.get("t", Trigger.SCHEDULED)),
        manual=item.get("m", 0),
    )
    return replace(occurrence, execution=_execution_of(item.get("x"), occurrence, action_id))


def _legacy_occurrence(item: dict[str, Any]) -> Occurrence:
    return Occurrence(
        occurrence=item["occurrence"],
        scheduled_time=parse_iso(item["scheduledTime"], "history.scheduledTime"),
        actual_time=parse_iso(item["actualTime"], "history.actualTime"),
        attempts=item["attempts"],
        outcome=Outcome(item["outcome"]),
        error=item.get("error"),
        late_ms=item.get("lateMs"),
        trigger=Trigger(item.get("trigger", Trigger.SCHEDULED)),
        manual=item.get("manual", 0),
        execution=item.get("execution"),
    )


def _execution_code(occurrence: Occurrence, action_id: str) -> str | None:
    """The name of the execution that ran a fire, as short as it can be told back: ``b:<hex>``
    for a batch of the fire's second, ``~<digest>g<generation>[...]`` for the fire's own
    execution (its name follows from the id, the digest and the fire; ``~g<generation>[...]``
    for a name made before names were keyed), else the name itself."""
    name = occurrence.execution
    if name is None:
        return None
    batch = re.fullmatch(r"b-(\d+)-([0-9a-f]{16}|[0-9a-f]{12})", name)
    if batch and int(batch[1]) == int(occurrence.scheduled_time.timestamp()):
        return f"b:{batch[2]}"
    tail = rf"-g(\d+)-o{occurrence.occurrence}((?:-[mlr]\d+)*)"
    own = re.fullmatch(rf".*-([0-9a-f]{{{DIGEST_DIGITS}}}){tail}", name)
    legacy = re.fullmatch(rf".*{tail}", name)
    for code in (
        f"~{own[1]}g{own[2]}{own[3]}" if own else None,
        f"~g{legacy[1]}{legacy[2]}" if legacy else None,
    ):
        if code is not None and _execution_of(code, occurrence, action_id) == name:
            return code
    return name


def _execution_of(code: str | None, occurrence: Occurrence, action_id: str) -> str | None:
    if code is None:
        return None
    if code.startswith("b:"):
        return f"b-{int(occurrence.scheduled_time.timestamp())}-{code[2:]}"
    own = re.fullmatch(r"~([0-9a-f]*)g(\d+)((?:-[mlr]\d+)*)", code)
    if own is None:
        return code
    parts = {part[0]: int(part[1:]) for part in own[3].split("-") if part}
    numbers = (
        int(own[2]),
        occurrence.occurrence,
        parts.get("l", 0),
        parts.get("r", 0),
        parts.get("m", 0),
    )
    if not own[1]:
        return legacy_execution_name(action_id, *numbers)
    return name_with_digest(action_id, own[1], *numbers)


def _deferred_item(change: Deferred | None) -> dict[str, Any] | None:
    if change is None:
        return None
    return _drop_none(
        {
            "kind": str(change.kind),
            "requestedAt": iso(change.requested_at),
            "request": change.request,
            "specHash": change.spec_hash,
            "eventId": change.event_id,
            "note": change.note,
        }
    )


def _deferred(item: dict[str, Any] | None) -> Deferred | None:
    if not item:
        return None
    return Deferred(
        kind=ChangeKind(item["kind"]),
        requested_at=parse_iso(item["requestedAt"], "deferred.requestedAt"),
        request=item.get("request"),
        spec_hash=item.get("specHash"),
        event_id=item.get("eventId"),
        note=item.get("note"),
    )


def _manual_item(fire: ManualFire) -> dict[str, Any]:
    return _drop_none(
        {
            "number": fire.number,
            "trigger": str(fire.trigger),
            "requestedAt": iso(fire.requested_at),
            "occurrence": fire.occurrence,
            "idempotencyKey": fire.idempotency_key,
            "requestId": fire.request_id,
            "claimedBy": fire.claimed_by,
            "generation": fire.generation,
            "scheduledTime": fire.scheduled and iso(fire.scheduled),
        }
    )


def _manual(item: dict[str, Any]) -> ManualFire:
    return ManualFire(
        number=item["number"],
        trigger=Trigger(item["trigger"]),
        requested_at=parse_iso(item["requestedAt"], "manual.requestedAt"),
        occurrence=item.get("occurrence", 0),
        idempotency_key=item.get("idempotencyKey", ""),
        request_id=item.get("requestId"),
        claimed_by=item.get("claimedBy"),
        generation=item.get("generation", 0),
        scheduled=(
            parse_iso(item["scheduledTime"], "manual.scheduledTime")
            if item.get("scheduledTime")
            else None
        ),
    )


def _missed_item(missed: MissedFire | None) -> dict[str, Any] | None:
    if missed is None:
        return None
    return {
        "generation": missed.generation,
        "occurrence": missed.occurrence,
        "scheduledTime": iso(missed.scheduled_time),
        "notedAt": iso(missed.noted_at),
    }


def _missed(item: dict[str, Any] | None) -> MissedFire | None:
    if not item:
        return None
    return MissedFire(
        generation=item["generation"],
        occurrence=item["occurrence"],
        scheduled_time=parse_iso(item["scheduledTime"], "missed.scheduledTime"),
        noted_at=parse_iso(item["notedAt"], "missed.notedAt"),
    )


def _change_item(change: OccurrenceChange) -> dict[str, Any]:
    return _drop_none(
        {
            "scheduled": iso(change.scheduled),
            "to": change.to and iso(change.to),
            "requestedAt": iso(change.requested_at),
            "note": change.note,
        }
    )


def _change(item: dict[str, Any]) -> OccurrenceChange:
    to = item.get("to")
    return OccurrenceChange(
        scheduled=parse_iso(item["scheduled"], "occurrenceChanges.scheduled"),
        requested_at=parse_iso(item["requestedAt"], "occurrenceChanges.requestedAt"),
        to=None if to is None else parse_iso(to, "occurrenceChanges.to"),
        note=item.get("note"),
    )


def _failed_item(failed: FailedFire) -> dict[str, Any]:
    return _drop_none(
        {
            "occurrence": failed.occurrence,
            "scheduledTime": iso(failed.scheduled_time),
            "idempotencyKey": failed.idempotency_key,
            "error": failed.error,
            "manual": failed.manual or None,
        }
    )


def _failed(item: dict[str, Any]) -> FailedFire:
    return FailedFire(
        occurrence=item["occurrence"],
        scheduled_time=parse_iso(item["scheduledTime"], "unresolved.scheduledTime"),
        idempotency_key=item["idempotencyKey"],
        error=item.get("error"),
        manual=item.get("manual", 0),
    )


_STATUS_CODES = {
    Status.PENDING: "P",
    Status.IN_PROGRESS: "I",
    Status.PAUSED: "Z",
    Status.COMPLETED: "C",
    Status.FAILED: "F",
    Status.NO_ACTION: "N",
    Status.CANCELLED: "X",
}
_CODED_STATUS = {code: status for status, code in _STATUS_CODES.items()}


def _transition_item(transition: Transition) -> dict[str, Any]:
    return _drop_none(
        {
            "t": to_epoch_ms(transition.at),
            "f": transition.from_status and _STATUS_CODES[transition.from_status],
            "s": _STATUS_CODES[transition.to_status],
            "r": transition.reason,
        }
    )


def _transition(item: dict[str, Any]) -> Transition:
    if "t" not in item:  # written before the short names
        before = item.get("fromStatus")
        return Transition(
            at=parse_iso(item["at"], "transitions.at"),
            from_status=Status(before) if before else None,
            to_status=Status(item["toStatus"]),
            reason=item["reason"],
        )
    before = item.get("f")
    return Transition(
        at=from_epoch_ms(item["t"]),
        from_status=_CODED_STATUS[before] if before else None,
        to_status=_CODED_STATUS[item["s"]],
        reason=item["r"],
    )


def _drop_none(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def _parked_keys(action: Action) -> dict[str, Any]:
    if not action.is_parked or action.launch_at is None:
        return {}
    launch_ms = to_epoch_ms(action.launch_at)
    shard = int.from_bytes(hashlib.sha256(action.id.encode()).digest()[1:3]) % PARK_SHARDS
    return {"launchAt": launch_ms, "parkShard": park_shard(park_bucket(launch_ms), shard)}


def _changed_at(action: Action) -> str | None:
    """Left out while the action is as it was created: read back, it is ``createdAt``."""
    if action.changed_at is None or action.changed_at == action.created_at:
        return None
    return iso(action.changed_at)


def to_item(action: Action) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": action.id,
        FORMAT: FORMAT_VERSION,
        "action": action.action,
        "data": action.data,
        "metadata": action.metadata,
        "executionTime": _epoch_ms(action.execution_time),
        "repeat": action.repeat,
        "frequency": action.frequency,
        "executionRemainder": action.execution_remainder,
        "status": str(action.status),
        "statusShard": status_shard(str(action.status), action.id),
        "retryCount": action.retry_count,
        "createdAt": iso(action.created_at),
        "updatedAt": iso(action.updated_at),
        "schedule": action.schedule.to_dict(),
        "version": action.version,
        "generation": action.generation,
        "occurrence": action.occurrence,
        "specHash": action.spec_hash,
        "startEventId": action.start_event_id,
        "superseded": list(action.superseded_starts) or None,
        "executionArn": action.execution_arn,
        "claimedBy": action.claimed_by,
        "lastResult": action.last_result,
        "lastError": action.last_error,
        "history": [_occurrence_item(h, action.id) for h in action.history],
        "transitions": [_transition_item(t) for t in action.transitions],
        "ttl": action.ttl,
        "request": action.request,
        "catchUp": None if action.catch_up == CatchUp() else action.catch_up.to_dict(),
        "seal": action.seal,
        "group": action.group,
        "groupShard": f"{action.group}#{shard_of(action.id)}",
        "idShard": f"ids#{shard_of(action.id)}",
        "attentionShard": f"attention#{shard_of(action.id)}" if action.needs_attention else None,
        # indexed while a manual fire runs or a backfill waits: the reconciler looks there
        "manualShard": (
            f"manual#{shard_of(action.id)}" if action.manual.in_flight or action.backfill else None
        ),
        **_parked_keys(action),
        "onFailure": action.on_failure and str(action.on_failure),
        "onUnknownOutcome": action.on_unknown_outcome and str(action.on_unknown_outcome),
        "roleArn": action.role_arn,
        "chain": action.lineage or None,
        "pauseNote": action.pause and action.pause.note,
        "pausedAt": action.pause and iso(action.pause.at),
        "changedAt": _changed_at(action),
        "deferred": _deferred_item(action.deferred),
        "manual": [_manual_item(m) for m in action.manual.in_flight] or None,
        "manualCount": action.manual.count or None,
        "asked": [_manual_item(m) for m in action.manual.asked] or None,
        "unresolved": [_failed_item(u) for u in action.unresolved] or None,
        "occurrenceChanges": [_change_item(c) for c in action.occurrence_changes] or None,
        "missed": _missed_item(action.missed) if action.missing_fire else None,
        "backfilled": [[iso(s.first), iso(s.last)] for s in action.backfilled] or None,
        "backfill": _backfill_item(action.backfill),
    }
    return _to_dynamo(_drop_none(item))


def from_item(raw: dict[str, Any]) -> Action:
    item = _from_dynamo(raw)
    execution_ms = item.get("executionTime")
    created_at = parse_iso(item["createdAt"], "createdAt")
    return Action(
        id=item["id"],
        action=item["action"],
        data=item.get("data", {}),
        metadata=item.get("metadata", {}),
        schedule=Schedule.from_dict(item["schedule"]),
        status=Status(item["status"]),
        execution_time=None if execution_ms is None else from_epoch_ms(execution_ms),
        occurrence=item["occurrence"],
        generation=item["generation"],
        version=item["version"],
        created_at=created_at,
        updated_at=parse_iso(item["updatedAt"], "updatedAt"),
        spec_hash=item.get("specHash", ""),
        start_event_id=item.get("startEventId"),
        superseded_starts=tuple(item.get("superseded", ())),
        retry_count=item.get("retryCount", 0),
        execution_arn=item.get("executionArn"),
        claimed_by=item.get("claimedBy"),
        last_result=item.get("lastResult"),
        last_error=item.get("lastError"),
        history=tuple(_occurrence(h, item["id"]) for h in item.get("history", [])),
        transitions=tuple(_transition(t) for t in item.get("transitions", [])),
        ttl=item.get("ttl"),
        request=item.get("request"),
        catch_up=CatchUp.from_dict(item.get("catchUp")),
        seal=item.get("seal"),
        group=item.get("group", DEFAULT_GROUP),
        on_failure=FailurePolicy(item["onFailure"]) if item.get("onFailure") else None,
        on_unknown_outcome=(
            UnknownOutcomePolicy(item["onUnknownOutcome"]) if item.get("onUnknownOutcome") else None
        ),
        lineage=item.get("chain", ""),
        role_arn=item.get("roleArn"),
        pause=(
            Pause(parse_iso(item["pausedAt"], "pausedAt"), item.get("pauseNote"))
            if item.get("pausedAt")
            else None
        ),
        changed_at=(
            parse_iso(item["changedAt"], "changedAt") if item.get("changedAt") else created_at
        ),
        launch_at=from_epoch_ms(item["launchAt"]) if item.get("launchAt") is not None else None,
        deferred=_deferred(item.get("deferred")),
        manual=ManualFires(
            in_flight=tuple(_manual(m) for m in item.get("manual", [])),
            count=item.get("manualCount", 0),
            asked=tuple(_manual(m) for m in item.get("asked", [])),
        ),
        unresolved=tuple(_failed(u) for u in item.get("unresolved", [])),
        occurrence_changes=tuple(_change(c) for c in item.get("occurrenceChanges", [])),
        missed=_missed(item.get("missed")),
        backfilled=tuple(
            Backfilled(parse_iso(first, "backfilled"), parse_iso(last, "backfilled"))
            for first, last in item.get("backfilled", [])
        ),
        backfill=_backfill(item.get("backfill")),
    )


def _backfill_item(request: BackfillRequest | None) -> dict[str, Any] | None:
    if request is None:
        return None
    return _drop_none(
        {
            "startTime": iso(request.start),
            "endTime": iso(request.end),
            "overlap": str(request.overlap),
            "requestedAt": iso(request.requested_at),
            "requestId": request.request_id,
            "note": request.note,
        }
    )


def _backfill(item: dict[str, Any] | None) -> BackfillRequest | None:
    if item is None:
        return None
    return BackfillRequest(
        start=parse_iso(item["startTime"], "backfill.startTime"),
        end=parse_iso(item["endTime"], "backfill.endTime"),
        overlap=Overlap(item["overlap"]),
        requested_at=parse_iso(item["requestedAt"], "backfill.requestedAt"),
        request_id=item.get("requestId"),
        note=item.get("note"),
    )
