"""What an operator has asked of a live action, kept on its record until it is done.

- ``FailurePolicy`` — what a failed occurrence does to the rest of a recurrence.
- ``Deferred`` — an update, cancel or pause that arrived inside the lock of a recurrence: the
  imminent fire is fixed, so the change waits on the record and applies once that fire is
  recorded.
- ``ManualFire`` — a fire an operator asked for (run now, or a retry by hand of a failed one),
  from its request until its tick or failure is recorded.
- ``FailedFire`` — a failed fire nobody has retried yet: what makes an action need attention.
- ``Pause`` — why and since when an action is paused.
- ``ManualFires`` — the fires asked for by hand: those in flight, how many in all, and the latest
  recorded ones.

Pure values; ``Action`` (domain/action.py) owns the transitions that use them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.fire import Trigger

__all__ = [
    "MAX_MANUAL_IN_FLIGHT",
    "MAX_NOTE_LENGTH",
    "MAX_UNRESOLVED",
    "ChangeKind",
    "Deferred",
    "FailedFire",
    "FailurePolicy",
    "ManualFire",
    "ManualFires",
    "MissedFire",
    "Pause",
    "TamperedCalendar",
    "check_note",
    "held_note",
    "idempotency_key",
]

MAX_NOTE_LENGTH = 500
MAX_MANUAL_IN_FLIGHT = 10
MAX_UNRESOLVED = 20
# Every fire's idempotency key is a UUID (version 5) of its identity in this namespace.
_KEYS = uuid.UUID("8f5d1b3c-6a2e-5f4b-9c1d-7e0a2b4c6d8e")


class FailurePolicy(StrEnum):
    """After a fire fails past its retries (the failed fire is recorded and retryable in every
    case): CONTINUE with the next occurrence, PAUSE the action, or STOP it (FAILED)."""

    CONTINUE = "CONTINUE"
    PAUSE = "PAUSE"
    STOP = "STOP"


class ChangeKind(StrEnum):
    UPDATE = "UPDATE"
    CANCEL = "CANCEL"
    PAUSE = "PAUSE"


@dataclass(frozen=True)
class Deferred:
    """A change that waits for the imminent fire; the latest request wins."""

    kind: ChangeKind
    requested_at: datetime
    request: dict[str, Any] | None = None  # UPDATE: the Start detail to apply
    spec_hash: str | None = None
    event_id: str | None = None
    note: str | None = None  # PAUSE: why


@dataclass(frozen=True)
class ManualFire:
    number: int  # the action's n-th manual fire
    trigger: Trigger  # RUN_NOW, RETRY, BACKFILL, CATCH_UP; SCHEDULED: handed on (ALLOW_ALL)
    requested_at: datetime
    occurrence: int = 0  # RETRY: the occurrence it runs again
    idempotency_key: str = ""  # RETRY: the failed fire's own key, so receivers can dedupe
    request_id: str | None = None  # the caller's id for the request: a repeat adds nothing
    claimed_by: str | None = None  # the execution running it (its ARN)
    generation: int = 0  # the action's generation when it was asked for: names its execution
    scheduled: datetime | None = None  # BACKFILL: the past occurrence's scheduled time
    # SCHEDULED: a scheduled fire handed on to be retried beside the schedule (overlapPolicy
    # ALLOW_ALL): the ARN of its own execution, which runs it (a repair's is its manual one)
    execution: str | None = None
    retries: int = 0  # its attempts that failed and were retried so far (noted after each)


@dataclass(frozen=True)
class ManualFires:
    """The fires an operator asked for: those not yet recorded (``in_flight``), how many were
    ever asked for (``count``, which numbers them), and the latest recorded ones (``asked``,
    so a repeated request is known and adds none)."""

    in_flight: tuple[ManualFire, ...] = ()
    count: int = 0
    asked: tuple[ManualFire, ...] = ()

    def fire(self, number: int) -> ManualFire | None:
        return next((m for m in self.in_flight if m.number == number), None)

    def by_request(self, request_id: str) -> ManualFire | None:
        """The fire asked for by ``request_id``, in flight or recorded lately."""
        return next((m for m in (*self.in_flight, *self.asked) if m.request_id == request_id), None)

    def requested(self, fire: ManualFire) -> ManualFires:
        return replace(self, in_flight=(*self.in_flight, fire), count=fire.number)

    def claimed(self, number: int, execution_arn: str | None) -> ManualFires:
        claimed = tuple(
            replace(m, claimed_by=execution_arn) if m.number == number else m
            for m in self.in_flight
        )
        return replace(self, in_flight=claimed)

    def noted(self, number: int, retries: int) -> ManualFires:
        noted = tuple(
            replace(m, retries=retries) if m.number == number else m for m in self.in_flight
        )
        return replace(self, in_flight=noted)

    def only_under_way(self) -> ManualFires:
        """What a cancel or a replace leaves in flight: only the scheduled fires handed on
        (overlapPolicy ALLOW_ALL), under way and recorded when they end."""
        handed_on = tuple(m for m in self.in_flight if m.trigger is Trigger.SCHEDULED)
        return replace(self, in_flight=handed_on)

    def recorded(self, number: int) -> ManualFires:
        done = tuple(m for m in self.in_flight if m.number == number)
        return replace(
            self,
            in_flight=tuple(m for m in self.in_flight if m.number != number),
            asked=(*self.asked, *done)[-MAX_MANUAL_IN_FLIGHT * 2 :],
        )


@dataclass(frozen=True)
class Pause:
    """Why and since when an action is paused. ``held_by``: the calendar that allows none of
    its fires within the search bound (it was not ended on that calendar's account): the
    action needs attention, and resumes by itself once the calendar allows a fire again."""

    at: datetime
    note: str | None = None
    held_by: str | None = None


def held_note(calendar: str) -> str:
    """Why an action is held on ``calendar`` (its pause note)."""
    return (
        f"held: calendar {calendar} allows none of its fires within the search bound; it"
        " resumes by itself once the calendar allows one"
    )


@dataclass(frozen=True)
class TamperedCalendar:
    """A fire found the calendar ``name`` changed outside tickwork (its seal did not hold) and
    kept the record's own copy: the action needs attention until a fire reads it sealed."""

    name: str
    noted_at: datetime


@dataclass(frozen=True)
class MissedFire:
    """A fire the watchdog found not fired by its time plus the grace: the fire key it noted
    (generation and occurrence), its time, and when it noticed. The action needs attention
    while its record is still at that fire."""

    generation: int
    occurrence: int
    scheduled_time: datetime
    noted_at: datetime


@dataclass(frozen=True)
class FailedFire:
    occurrence: int  # 0 for a failed run now
    scheduled_time: datetime
    idempotency_key: str
    error: str | None
    manual: int = 0


def idempotency_key(action_id: str, lineage: str, occurrence: int, manual: int = 0) -> str:
    """The key of one fire, the same on every attempt of it and unique across replaces, updates
    and purges (``lineage`` is new with each schedule an id is given): a UUID."""
    name = f"{action_id}\x1f{lineage}\x1f{occurrence}" + (f"\x1fm{manual}" if manual else "")
    return str(uuid.uuid5(_KEYS, name))


def check_note(note: Any, field: str = "note") -> str | None:
    if note is None:
        return None
    if not isinstance(note, str) or len(note) > MAX_NOTE_LENGTH:
        raise ValidationFailed.of(
            field,
            "is not a text of at most 500 characters",
            "give a short note saying why, or leave it out",
        )
    return note
