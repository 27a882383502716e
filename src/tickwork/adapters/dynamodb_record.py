"""The action record as a DynamoDB item, and back, by the item's format (``fmt``).

Items keep the seed schema's attribute names (id, action, data, metadata, executionTime in
epoch milliseconds, repeat, frequency, executionRemainder, status, retryCount, createdAt,
updatedAt) beside tickwork's own (schedule with its zone, version, generation, occurrence, ...),
the keys of the table's indexes (``record_keys``), and the parts in their stored forms
(``record_codecs``). For the write units a record costs, ``catchUp`` is left out at its default
(ONCE after 60 s) and ``changedAt`` while it equals ``createdAt``; ``group`` in the default
group, ``retryCount`` at 0, ``data`` and ``metadata`` when empty (``{}``) and the schedule's
``timezone`` in UTC likewise: each reads back as that (every reader of format 3 took them so).

Formats: every item is written in ``FORMAT_VERSION`` and read by the reader of the format it
says — 3 (``fmt`` 3: the named execution by its machine and name, not its ARN, and a claim by
it as ``claimedBy`` ``=``, given the stack's machines (``execution_refs``); ``claimedAt`` in
epoch milliseconds and the schedule's instants in epoch microseconds; the Start detail
without the record's own ``id``; a history entry's
attempts and outcome left out at 1 and FIRED; a fire's hour total told by its minute in a
batch's carried changes, read, written from the next release on (``dynamodb_tabs``): a
recurring record near 1 KB, one write unit a write most of the time),
2 (``fmt`` 2: a batch's counter changes carried in pairs, ``dynamodb_tabs``, and the zone in
the schedule only) or 1 (no ``fmt``: ``record_format_1``). An item of another format is
refused (``RecordFormatUnknown``): a newer tickwork wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from tickwork.adapters import record_codecs as codecs
from tickwork.adapters.execution_refs import ExecutionRefs
from tickwork.adapters.record_format_1 import format_1_occurrence, format_1_transition
from tickwork.adapters.record_keys import index_keys
from tickwork.domain.action import Action, Occurrence, Status, Transition
from tickwork.domain.backfill import Backfilled
from tickwork.domain.catch_up import CatchUp
from tickwork.domain.errors import RecordFormatUnknown
from tickwork.domain.fire_ending import UnknownOutcomePolicy
from tickwork.domain.fire_policy import FirePolicy
from tickwork.domain.identifiers import DEFAULT_GROUP
from tickwork.domain.schedule import Schedule
from tickwork.domain.steering import FailurePolicy, ManualFires, Pause
from tickwork.domain.times import from_epoch_ms, iso, iso_exact, parse_iso, to_epoch_ms

__all__ = [
    "CLAIMED_BY_NAMED",
    "FORMAT",
    "FORMAT_VERSION",
    "READ_FORMATS",
    "format_of",
    "from_item",
    "to_item",
]

FORMAT = "fmt"  # the item's attribute that says its format
FORMAT_VERSION = 3  # the format every item is written in
CLAIMED_BY_NAMED = "="  # claimedBy: the execution the record names (executionArn)


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


def _changed_at(action: Action) -> str | None:
    """Left out while the action is as it was created: read back, it is ``createdAt``."""
    if action.changed_at is None or action.changed_at == action.created_at:
        return None
    return iso(action.changed_at)


_SCHEDULE_INSTANTS = ("anchor", "start", "end")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _schedule_item(schedule: Schedule) -> dict[str, Any]:
    """The schedule as stored (format 3): its instants in microseconds since the epoch, a
    third of their text."""
    stored = schedule.to_dict()
    if stored.get("timezone") == "UTC":  # read back as UTC when absent
        del stored["timezone"]
    for name in _SCHEDULE_INSTANTS:
        if name in stored:
            stored[name] = (parse_iso(stored[name], name) - _EPOCH) // _MICROSECOND
    return stored


def _schedule_of(stored: dict[str, Any]) -> dict[str, Any]:
    """A format 3 schedule as ``Schedule.from_dict`` reads it."""
    return {
        name: iso_exact(_EPOCH + int(value) * _MICROSECOND)
        if name in _SCHEDULE_INSTANTS and not isinstance(value, str)
        else value
        for name, value in stored.items()
    }


def _request_item(action: Action) -> dict[str, Any] | None:
    """The Start detail as stored (format 3): without its ``id`` when it is the record's own;
    one that had none (an id the stack gave it) says so with ``"id": null``."""
    request = action.request
    if request is None:
        return None
    if "id" not in request:
        return {**request, "id": None}
    if request["id"] != action.id:
        return request
    return {name: value for name, value in request.items() if name != "id"}


def _request_of(item: dict[str, Any]) -> dict[str, Any] | None:
    """A format 3 Start detail as it was given: its ``id`` again, or none where it had none."""
    stored: dict[str, Any] | None = item.get("request")
    if stored is None:
        return None
    if "id" not in stored:
        return {"id": item["id"], **stored}
    if stored["id"] is None:
        return {name: value for name, value in stored.items() if name != "id"}
    return stored


def _claim_item(action: Action, refs: ExecutionRefs | None) -> str | None:
    """``claimedBy`` as stored: ``=`` for the execution the record names (the claim nearly
    always is: the ARN once, not twice)."""
    if action.claimed_by is not None and action.claimed_by == action.execution_arn:
        return CLAIMED_BY_NAMED
    return refs.stored(action.claimed_by) if refs else action.claimed_by


def to_item(action: Action, refs: ExecutionRefs | None = None) -> dict[str, Any]:
    """The item of ``action``; ``refs``: the stack's machines, whose executions it names by
    machine and name (without: by whole ARN, as read)."""
    item: dict[str, Any] = {
        "id": action.id,
        FORMAT: FORMAT_VERSION,
        "action": action.action,
        # What a reader takes for absent is left out (a recurring record under 1 KB)
        "data": None if action.data == {} else action.data,
        "metadata": None if action.metadata == {} else action.metadata,
        "executionTime": _epoch_ms(action.execution_time),
        "repeat": action.repeat,
        "frequency": action.frequency,
        "executionRemainder": action.execution_remainder,
        "status": str(action.status),
        "retryCount": action.retry_count or None,
        "createdAt": iso(action.created_at),
        "updatedAt": iso(action.updated_at),
        "schedule": _schedule_item(action.schedule),
        "version": action.version,
        "generation": action.generation,
        "occurrence": action.occurrence,
        "specHash": action.spec_hash,
        "startEventId": action.start_event_id,
        "superseded": list(action.superseded_starts) or None,
        "executionArn": refs.stored(action.execution_arn) if refs else action.execution_arn,
        "claimedBy": _claim_item(action, refs),
        "claimedAt": _epoch_ms(action.claimed_at),
        "buffered": action.buffered or None,
        "lastResult": action.last_result,
        "lastError": action.last_error,
        "history": [codecs.occurrence_item(h, action.id, short=True) for h in action.history],
        "transitions": [codecs.transition_item(t) for t in action.transitions],
        "ttl": action.ttl,
        "request": _request_item(action),
        "catchUp": None if action.catch_up == CatchUp() else action.catch_up.to_dict(),
        "seal": action.seal,
        "group": None if action.group == DEFAULT_GROUP else action.group,
        **index_keys(action),
        "onFailure": action.on_failure and str(action.on_failure),
        "onUnknownOutcome": action.on_unknown_outcome and str(action.on_unknown_outcome),
        "roleArn": action.role_arn,
        "policy": action.policy.to_dict() or None,
        "chain": action.lineage or None,
        "pauseNote": action.pause and action.pause.note,
        "pausedAt": action.pause and iso(action.pause.at),
        "pausedBy": action.pause and action.pause.held_by,
        "changedAt": _changed_at(action),
        "deferred": codecs.deferred_item(action.deferred),
        "manual": [codecs.manual_item(m) for m in action.manual.in_flight] or None,
        "manualCount": action.manual.count or None,
        "asked": [codecs.manual_item(m) for m in action.manual.asked] or None,
        "unresolved": [codecs.failed_item(u) for u in action.unresolved] or None,
        "occurrenceChanges": [codecs.change_item(c) for c in action.occurrence_changes] or None,
        "missed": codecs.missed_item(action.missed) if action.missing_fire else None,
        "calendarTampered": codecs.tampered_item(action.tampered_calendar),
        "backfilled": [[iso(s.first), iso(s.last)] for s in action.backfilled] or None,
        "backfill": codecs.backfill_item(action.backfill),
    }
    return _to_dynamo(codecs.drop_none(item))


def format_of(item: dict[str, Any]) -> int | str:
    """The format an item says it is in: its ``fmt`` (a whole number as written), or 1 when it
    has none; anything else as it stands, which no reader takes."""
    stated = item.get(FORMAT, 1)
    if isinstance(stated, Decimal) and stated == stated.to_integral_value():
        return int(stated)  # as boto3 reads a number
    return stated if isinstance(stated, int) and not isinstance(stated, bool) else repr(stated)


def from_item(raw: dict[str, Any], refs: ExecutionRefs | None = None) -> Action:
    """The action an item holds, read by its format's reader; ``RecordFormatUnknown`` for a
    format this code does not read. ``refs``: the stack's machines, to tell the ARNs of the
    executions an item names by machine and name (without: those values as they stand)."""
    item = _from_dynamo(raw)
    version = format_of(item)
    reader = READ_FORMATS.get(version) if isinstance(version, int) else None
    if reader is None:
        raise RecordFormatUnknown(str(item.get("id")), str(version), sorted(READ_FORMATS))
    return reader(item, refs)


def _read_format_3(item: dict[str, Any], refs: ExecutionRefs | None) -> Action:
    named = refs.read(item.get("executionArn")) if refs else item.get("executionArn")
    claimed_by = item.get("claimedBy")
    if claimed_by == CLAIMED_BY_NAMED:
        claimed_by = named
    elif refs:
        claimed_by = refs.read(claimed_by)
    claimed_at = item.get("claimedAt")
    return _read(
        {
            **item,
            "schedule": _schedule_of(item["schedule"]),
            "request": _request_of(item),
            "executionArn": named,
            "claimedBy": claimed_by,
            "claimedAt": None if claimed_at is None else iso(from_epoch_ms(claimed_at)),
        },
        codecs.short_occurrence,
        codecs.transition,
    )


def _read_format_2(item: dict[str, Any], refs: ExecutionRefs | None) -> Action:
    return _read(item, codecs.occurrence, codecs.transition)


def _read_format_1(item: dict[str, Any], refs: ExecutionRefs | None) -> Action:
    return _read(item, format_1_occurrence, format_1_transition)


READ_FORMATS: dict[int, Callable[[dict[str, Any], ExecutionRefs | None], Action]] = {
    1: _read_format_1,
    2: _read_format_2,
    3: _read_format_3,
}


def _read(
    item: dict[str, Any],
    occurrence: Callable[[dict[str, Any], str], Occurrence],
    transition: Callable[[dict[str, Any]], Transition],
) -> Action:
    """The action an item of a known format holds, its history entries and transitions read by
    the format's own readers."""
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
        claimed_at=parse_iso(item["claimedAt"], "claimedAt") if item.get("claimedAt") else None,
        buffered=bool(item.get("buffered", False)),
        last_result=item.get("lastResult"),
        last_error=item.get("lastError"),
        history=tuple(occurrence(h, item["id"]) for h in item.get("history", [])),
        transitions=tuple(transition(t) for t in item.get("transitions", [])),
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
        policy=FirePolicy.from_dict(item.get("policy")),
        pause=(
            Pause(
                parse_iso(item["pausedAt"], "pausedAt"), item.get("pauseNote"), item.get("pausedBy")
            )
            if item.get("pausedAt")
            else None
        ),
        changed_at=(
            parse_iso(item["changedAt"], "changedAt") if item.get("changedAt") else created_at
        ),
        launch_at=from_epoch_ms(item["launchAt"]) if item.get("launchAt") is not None else None,
        # parked far: found by its fire time, so written without a Parked entry (record_keys)
        far_park=item.get("launchAt") is not None and item.get("parkShard") is None,
        deferred=codecs.deferred(item.get("deferred")),
        manual=ManualFires(
            in_flight=tuple(codecs.manual(m) for m in item.get("manual", [])),
            count=item.get("manualCount", 0),
            asked=tuple(codecs.manual(m) for m in item.get("asked", [])),
        ),
        unresolved=tuple(codecs.failed(u) for u in item.get("unresolved", [])),
        occurrence_changes=tuple(codecs.change(c) for c in item.get("occurrenceChanges", [])),
        missed=codecs.missed(item.get("missed")),
        tampered_calendar=codecs.tampered(item.get("calendarTampered")),
        backfilled=tuple(
            Backfilled(parse_iso(first, "backfilled"), parse_iso(last, "backfilled"))
            for first, last in item.get("backfilled", [])
        ),
        backfill=codecs.backfill(item.get("backfill")),
    )
