"""The parts of a record's item, each to its stored form and back (the current format's): the
history and the transitions, most of a busy record, in short names with epoch milliseconds
(``history``: ``o`` occurrence, ``s``/``a`` scheduled and actual time, ``n`` attempts, ``r``
outcome, ``e`` error, ``l`` lateness, ``t`` trigger, ``m`` manual, ``x`` the execution that ran
it, as a short code: ``execution_codes``; the scheduled time is left out when the actual time
less the lateness tells it; ``transitions``: ``t`` at, ``f``/``s`` from and to status as one
letter, ``r`` reason) — every write of a record costs a write unit per KB of it — and the
steering parts (a deferred change, manual fires, a missed fire's note, occurrence changes,
failed fires, a backfill) in camelCase.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tickwork.adapters.execution_codes import execution_code, execution_of
from tickwork.domain.action import Occurrence, Status, Transition
from tickwork.domain.backfill import BackfillRequest, Overlap
from tickwork.domain.fire import Outcome, Trigger
from tickwork.domain.occurrence_changes import OccurrenceChange
from tickwork.domain.steering import (
    ChangeKind,
    Deferred,
    FailedFire,
    ManualFire,
    MissedFire,
    TamperedCalendar,
)
from tickwork.domain.times import from_epoch_ms, iso, parse_iso, to_epoch_ms

__all__ = [
    "CODED_STATUS",
    "STATUS_CODES",
    "backfill",
    "backfill_item",
    "change",
    "change_item",
    "deferred",
    "deferred_item",
    "drop_none",
    "failed",
    "failed_item",
    "manual",
    "manual_item",
    "missed",
    "missed_item",
    "occurrence",
    "occurrence_item",
    "short_occurrence",
    "tampered",
    "tampered_item",
    "transition",
    "transition_item",
]


def occurrence_item(occurrence: Occurrence, action_id: str, short: bool = False) -> dict[str, Any]:
    """One fire of the history, in short names: the history is most of a busy record, and a
    record's every write costs a write unit per KB of it. ``short`` (format 3): one attempt
    and the outcome FIRED, the usual fire, are left out (``short_occurrence`` reads them)."""
    actual = to_epoch_ms(occurrence.actual_time)
    scheduled = to_epoch_ms(occurrence.scheduled_time)
    told_by_lateness = (
        occurrence.late_ms is not None
        and from_epoch_ms(actual - occurrence.late_ms) == occurrence.scheduled_time
    )
    return drop_none(
        {
            "o": occurrence.occurrence,
            "s": None if told_by_lateness else scheduled,  # else actual time less lateness
            "a": actual,
            "n": None if short and occurrence.attempts == 1 else occurrence.attempts,
            "r": None if short and occurrence.outcome is Outcome.FIRED else str(occurrence.outcome),
            "e": occurrence.error,
            "l": occurrence.late_ms,
            "t": None if occurrence.trigger is Trigger.SCHEDULED else str(occurrence.trigger),
            "m": occurrence.manual or None,
            "x": execution_code(occurrence, action_id),
            "w": occurrence.reason,
            "v": None if occurrence.moved_to is None else to_epoch_ms(occurrence.moved_to),
        }
    )


def occurrence(item: dict[str, Any], action_id: str) -> Occurrence:
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
        reason=item.get("w"),
        moved_to=from_epoch_ms(item["v"]) if item.get("v") is not None else None,
    )
    return replace(occurrence, execution=execution_of(item.get("x"), occurrence, action_id))


def short_occurrence(item: dict[str, Any], action_id: str) -> Occurrence:
    """A history entry of format 3: one attempt and FIRED where it says neither."""
    return occurrence({"n": 1, "r": str(Outcome.FIRED), **item}, action_id)


STATUS_CODES = {
    Status.PENDING: "P",
    Status.IN_PROGRESS: "I",
    Status.PAUSED: "Z",
    Status.COMPLETED: "C",
    Status.FAILED: "F",
    Status.NO_ACTION: "N",
    Status.CANCELLED: "X",
}


CODED_STATUS = {code: status for status, code in STATUS_CODES.items()}


def transition_item(transition: Transition) -> dict[str, Any]:
    return drop_none(
        {
            "t": to_epoch_ms(transition.at),
            "f": transition.from_status and STATUS_CODES[transition.from_status],
            "s": STATUS_CODES[transition.to_status],
            "r": transition.reason,
        }
    )


def transition(item: dict[str, Any]) -> Transition:
    before = item.get("f")
    return Transition(
        at=from_epoch_ms(item["t"]),
        from_status=CODED_STATUS[before] if before else None,
        to_status=CODED_STATUS[item["s"]],
        reason=item["r"],
    )


def deferred_item(change: Deferred | None) -> dict[str, Any] | None:
    if change is None:
        return None
    return drop_none(
        {
            "kind": str(change.kind),
            "requestedAt": iso(change.requested_at),
            "request": change.request,
            "specHash": change.spec_hash,
            "eventId": change.event_id,
            "note": change.note,
        }
    )


def deferred(item: dict[str, Any] | None) -> Deferred | None:
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


def manual_item(fire: ManualFire) -> dict[str, Any]:
    return drop_none(
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
            "execution": fire.execution,
            "retries": fire.retries or None,
        }
    )


def manual(item: dict[str, Any]) -> ManualFire:
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
        execution=item.get("execution"),
        retries=int(item.get("retries", 0)),
    )


def missed_item(missed: MissedFire | None) -> dict[str, Any] | None:
    if missed is None:
        return None
    return {
        "generation": missed.generation,
        "occurrence": missed.occurrence,
        "scheduledTime": iso(missed.scheduled_time),
        "notedAt": iso(missed.noted_at),
    }


def missed(item: dict[str, Any] | None) -> MissedFire | None:
    if not item:
        return None
    return MissedFire(
        generation=item["generation"],
        occurrence=item["occurrence"],
        scheduled_time=parse_iso(item["scheduledTime"], "missed.scheduledTime"),
        noted_at=parse_iso(item["notedAt"], "missed.notedAt"),
    )


def tampered_item(noted: TamperedCalendar | None) -> dict[str, Any] | None:
    return None if noted is None else {"name": noted.name, "notedAt": iso(noted.noted_at)}


def tampered(item: dict[str, Any] | None) -> TamperedCalendar | None:
    if not item:
        return None
    return TamperedCalendar(
        str(item["name"]), parse_iso(item["notedAt"], "calendarTampered.notedAt")
    )


def change_item(change: OccurrenceChange) -> dict[str, Any]:
    return drop_none(
        {
            "scheduled": iso(change.scheduled),
            "to": change.to and iso(change.to),
            "requestedAt": iso(change.requested_at),
            "note": change.note,
        }
    )


def change(item: dict[str, Any]) -> OccurrenceChange:
    to = item.get("to")
    return OccurrenceChange(
        scheduled=parse_iso(item["scheduled"], "occurrenceChanges.scheduled"),
        requested_at=parse_iso(item["requestedAt"], "occurrenceChanges.requestedAt"),
        to=None if to is None else parse_iso(to, "occurrenceChanges.to"),
        note=item.get("note"),
    )


def failed_item(failed: FailedFire) -> dict[str, Any]:
    return drop_none(
        {
            "occurrence": failed.occurrence,
            "scheduledTime": iso(failed.scheduled_time),
            "idempotencyKey": failed.idempotency_key,
            "error": failed.error,
            "manual": failed.manual or None,
        }
    )


def failed(item: dict[str, Any]) -> FailedFire:
    return FailedFire(
        occurrence=item["occurrence"],
        scheduled_time=parse_iso(item["scheduledTime"], "unresolved.scheduledTime"),
        idempotency_key=item["idempotencyKey"],
        error=item.get("error"),
        manual=item.get("manual", 0),
    )


def backfill_item(request: BackfillRequest | None) -> dict[str, Any] | None:
    if request is None:
        return None
    return drop_none(
        {
            "startTime": iso(request.start),
            "endTime": iso(request.end),
            "overlap": str(request.overlap),
            "requestedAt": iso(request.requested_at),
            "requestId": request.request_id,
            "note": request.note,
            "catchUp": True if request.catch_up else None,
        }
    )


def backfill(item: dict[str, Any] | None) -> BackfillRequest | None:
    if item is None:
        return None
    return BackfillRequest(
        start=parse_iso(item["startTime"], "backfill.startTime"),
        end=parse_iso(item["endTime"], "backfill.endTime"),
        overlap=Overlap(item["overlap"]),
        requested_at=parse_iso(item["requestedAt"], "backfill.requestedAt"),
        request_id=item.get("requestId"),
        note=item.get("note"),
        catch_up=bool(item.get("catchUp")),
    )


def drop_none(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}
