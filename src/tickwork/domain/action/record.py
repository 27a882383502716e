"""The action record: what is scheduled, where its fires stand, and what happened — its fields,
and the views every reader takes of them (its fire key, its policies, where its occurrences
fall). Its transitions are the fire's (``fire_state``) and the user's (``steering_state``).

Pure: nothing here reads a clock or talks to AWS.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Self

from tickwork.domain.backfill import Backfilled, BackfillRequest
from tickwork.domain.catch_up import DEFAULT_CATCH_UP, CatchUp
from tickwork.domain.errors import TransitionRefused
from tickwork.domain.execution import same_execution
from tickwork.domain.fire import FireKey, Outcome, Trigger
from tickwork.domain.fire_ending import UnknownOutcomePolicy
from tickwork.domain.fire_policy import NO_POLICY, FirePolicy
from tickwork.domain.identifiers import DEFAULT_GROUP
from tickwork.domain.occurrence_changes import OccurrenceChange
from tickwork.domain.schedule import Schedule
from tickwork.domain.steering import (
    Deferred,
    FailedFire,
    FailurePolicy,
    ManualFires,
    MissedFire,
    Pause,
    TamperedCalendar,
    idempotency_key,
)
from tickwork.domain.times import ceil_ms

__all__ = [
    "ACTIVE",
    "FINISHED",
    "LIVE",
    "SUPERSEDED_STARTS",
    "ActionRecord",
    "Limits",
    "Occurrence",
    "Status",
    "Transition",
    "remember_start",
    "start_mark",
]

_MICROSECOND = timedelta(microseconds=1)


class Status(StrEnum):
    PENDING = "PENDING"
    IN_PROGRESS = "IN_PROGRESS"
    PAUSED = "PAUSED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    NO_ACTION = "NO_ACTION"
    CANCELLED = "CANCELLED"


# How many of the Start events a record moved past it remembers, so that one delivered again
# late (EventBridge retries a delivery for up to a day, in no order) is not taken as new.
SUPERSEDED_STARTS = 16


def start_mark(event_id: str) -> str:
    """A Start event's id as the record remembers it: 48 bits of its SHA-256 (ids are
    EventBridge's UUIDs, not chosen by a publisher)."""
    return hashlib.sha256(event_id.encode()).hexdigest()[:12]


def remember_start(marks: tuple[str, ...], earlier: str | None, now: str | None) -> tuple[str, ...]:
    """``marks`` and the Start event ``earlier``, unless it is the Start ``now`` applied."""
    if not earlier or earlier == now or start_mark(earlier) in marks:
        return marks
    return (*marks, start_mark(earlier))[-SUPERSEDED_STARTS:]


ACTIVE = frozenset({Status.PENDING, Status.IN_PROGRESS})  # a fire is waiting or running
LIVE = ACTIVE | {Status.PAUSED}  # not finished: can still fire
FINISHED = frozenset({Status.COMPLETED, Status.FAILED, Status.NO_ACTION, Status.CANCELLED})


@dataclass(frozen=True)
class Occurrence:
    """One fire as it happened: kept in a bounded history on the record."""

    occurrence: int
    scheduled_time: datetime
    actual_time: datetime
    attempts: int
    outcome: Outcome
    error: str | None = None
    late_ms: int | None = None  # how late it ran (or was found, when skipped)
    trigger: Trigger = Trigger.SCHEDULED  # RUN_NOW and RETRY: an operator asked for it
    manual: int = 0  # the number of the manual fire it was
    execution: str | None = None  # the execution that ran it: its own, or its batch
    # why nothing ran (SKIPPED, NO_ACTION): "skipped by request: <note>", "missed; catch-up
    # SKIP", "excluded by calendar NAME", ...; for a moved occurrence, why it was moved
    reason: str | None = None
    # a moved occurrence: when it fired instead of its ``scheduled_time`` (its lateness counts
    # from this)
    moved_to: datetime | None = None


@dataclass(frozen=True)
class Transition:
    at: datetime
    from_status: Status | None
    to_status: Status
    reason: str


@dataclass(frozen=True)
class ActionRecord:
    """The record's fields and views; every transition returns the next version of it."""

    id: str
    action: str
    data: dict[str, Any]
    metadata: dict[str, Any]
    schedule: Schedule
    status: Status
    execution_time: datetime | None  # the next (or current) fire
    occurrence: int  # 1-based number of the next (or current) fire
    generation: int  # bumped when what runs changes: replace, cancel, pause, manual retry
    version: int  # bumped on every write (optimistic concurrency)
    created_at: datetime
    updated_at: datetime
    spec_hash: str
    start_event_id: str | None = None
    superseded_starts: tuple[str, ...] = ()  # start_mark of each Start event moved past
    retry_count: int = 0
    execution_arn: str | None = None
    claimed_by: str | None = None
    last_result: dict[str, Any] | None = None
    last_error: str | None = None
    history: tuple[Occurrence, ...] = ()
    transitions: tuple[Transition, ...] = ()
    ttl: int | None = None
    request: dict[str, Any] | None = None  # the Start detail as received (PATCH merges into it)
    catch_up: CatchUp = DEFAULT_CATCH_UP
    seal: str | None = None  # HMAC over what runs (domain.seal), checked before each fire
    group: str = DEFAULT_GROUP
    on_failure: FailurePolicy | None = None  # None: CONTINUE for a recurrence, STOP for a one-off
    # A claimed fire whose execution ended without a tick or a report (None: FAIL).
    on_unknown_outcome: UnknownOutcomePolicy | None = None
    # New with each schedule of the id (``chain``): in its fires' idempotency keys, never shared.
    lineage: str = ""
    pause: Pause | None = None  # set while paused (kept by a replace of a paused action)
    deferred: Deferred | None = None  # waits for the imminent fire (inside the lock)
    manual: ManualFires = field(default_factory=ManualFires)  # fires an operator asked for
    unresolved: tuple[FailedFire, ...] = ()  # failed fires not retried yet
    role_arn: str | None = None  # the execution role its target is reached with
    # When a change was last applied to it (created, replaced, updated, cancelled, paused,
    # resumed, a fire asked for): a signed request older than this is stale. Fires leave it.
    changed_at: datetime | None = None
    # Set while the next fire is parked (no execution yet: the pump starts one at this moment),
    # and whether it was parked far ahead of it (``FireState.parked_far``).
    launch_at: datetime | None = None
    far_park: bool = False
    # Occurrences skipped or moved by request (domain.occurrence_changes), in time order; each
    # leaves once its occurrence is recorded.
    occurrence_changes: tuple[OccurrenceChange, ...] = ()
    # Set by the watchdog when the fire the record is at had not happened by its time plus the
    # grace (fire.watchdog); it stands for that fire only.
    missed: MissedFire | None = None
    # Backfill: the spans of past scheduled times run once each, and the backfill still running
    backfilled: tuple[Backfilled, ...] = ()
    backfill: BackfillRequest | None = None
    # Set by a fire that found its calendar changed outside tickwork (it kept this record's
    # copy); cleared by the first fire that reads the calendar under its seal again.
    tampered_calendar: TamperedCalendar | None = None
    policy: FirePolicy = NO_POLICY  # its own fire policy (domain.fire_policy)
    # Its fire's claim (first attempt): what comes due after is its overlap policy's; buffered:
    # held back by that policy, late by design, never missed (domain.action.following).
    claimed_at: datetime | None = None
    buffered: bool = False

    @property
    def fire_key(self) -> FireKey:
        """The scheduled fire the record is at."""
        return (self.id, self.generation, self.occurrence, 0)

    @property
    def failure_policy(self) -> FailurePolicy:
        if self.on_failure is not None:
            return self.on_failure
        return FailurePolicy.CONTINUE if self.repeat else FailurePolicy.STOP

    @property
    def unknown_outcome_policy(self) -> UnknownOutcomePolicy:
        return self.on_unknown_outcome or UnknownOutcomePolicy.FAIL

    @property
    def needs_attention(self) -> bool:
        """A fire failed and nobody has retried it yet (or the action ended FAILED), the fire
        it is at was found missed and has still not happened, its calendar allows none of its
        fires (held, paused), or a fire found its calendar changed outside tickwork."""
        return (
            self.status == Status.FAILED
            or bool(self.unresolved)
            or self.missing_fire
            or self.held_by_calendar is not None
            or (self.tampered_calendar is not None and self.status in LIVE)
        )

    @property
    def held_by_calendar(self) -> str | None:
        """The calendar it is paused on, allowing none of its fires within the search bound."""
        pause = self.pause
        return pause.held_by if self.status == Status.PAUSED and pause else None

    @property
    def missing_fire(self) -> bool:
        """The watchdog found the fire the record is at missed, and it has not happened yet."""
        missed = self.missed
        return (
            missed is not None
            and self.status == Status.PENDING
            and (missed.generation, missed.occurrence) == (self.generation, self.occurrence)
        )

    def key_of(self, occurrence: int, manual: int = 0) -> str:
        """The idempotency key of this schedule's occurrence (or manual fire)."""
        return idempotency_key(self.id, self.lineage or f"g{self.generation}", occurrence, manual)

    @property
    def repeat(self) -> bool:
        return self.schedule.kind != "once"

    @property
    def frequency(self) -> str | None:
        return self.schedule.frequency if self.schedule.kind == "frequency" else None

    @property
    def execution_remainder(self) -> int | None:
        """Fires left including the next one; None when unbounded by count."""
        if self.status not in LIVE:
            return 0
        if self.schedule.kind == "once":
            return 1
        if self.schedule.max_occurrences is None:
            return None
        return max(self.schedule.max_occurrences - self.occurrence + 1, 0)

    def is_locked(self, now: datetime, lock: timedelta) -> bool:
        """Inside the lock window (its own ``lockSeconds``, else the stack's ``lock``) the
        imminent fire's schedule is fixed: a one-off's can no longer be changed, a
        recurrence's change waits for the fire (``deferring``). A cancel or a pause is not a
        change of the schedule: it wins until the fire is claimed (``is_claimed``)."""
        if self.status == Status.IN_PROGRESS:
            return True
        return (
            self.status == Status.PENDING
            and self.execution_time is not None
            and self.execution_time - now <= self.policy.lock(lock)
        )

    @property
    def is_claimed(self) -> bool:
        """The fire it is at is under way: claimed by the execution running it."""
        return self.status == Status.IN_PROGRESS

    def holds_claim(self, execution_arn: str) -> bool:
        """Whether that execution holds the claim on the fire the record is at."""
        return self.status == Status.IN_PROGRESS and same_execution(self.claimed_by, execution_arn)

    @property
    def is_parked(self) -> bool:
        """Its next fire waits in the table, no execution named for it (the pump launches it)."""
        return self.status == Status.PENDING and self.launch_at is not None

    def change_of(self, scheduled: datetime) -> OccurrenceChange | None:
        """The change asked for the occurrence scheduled at ``scheduled``, if any."""
        return next((c for c in self.occurrence_changes if c.scheduled == scheduled), None)

    def origin_of(self, fire_time: datetime) -> datetime:
        """The scheduled time of the occurrence that fires at ``fire_time``: a moved one's own,
        else the one the flexible window put there, else ``fire_time`` itself."""
        moved = next((c for c in self.occurrence_changes if c.to == fire_time), None)
        if moved is not None:
            return moved.scheduled
        return self.schedule.origin(fire_time, self.id)

    def fire_time_of(self, scheduled: datetime) -> datetime:
        """When the occurrence scheduled at ``scheduled`` fires (or, skipped, comes due): its
        moved time, if moved, else its instant in the schedule's flexible window or its shifted
        time past its calendar's exclusions, if either."""
        change = self.change_of(scheduled)
        if change is not None and change.to is not None:
            return change.to
        return self.unmoved_fire_time(scheduled)

    def unmoved_fire_time(self, scheduled: datetime) -> datetime:
        """When the occurrence scheduled at ``scheduled`` fires as its schedule says, whatever
        change of it was asked (where a skip comes due, and a restore puts it back)."""
        return ceil_ms(self.schedule.fire_time(scheduled, self.id))

    def moved_fire(
        self, after: datetime, before: datetime | None, from_moment: datetime
    ) -> datetime | None:
        """The earliest moved fire, at or after ``from_moment``, of an occurrence scheduled
        strictly between ``after`` and ``before`` (None: no bound): one that a walk of the
        schedule from a later scheduled time does not meet (its time passed, its move did
        not)."""
        return min(
            (
                change.to
                for change in self.occurrence_changes
                if change.to is not None
                and after < change.scheduled
                and (before is None or change.scheduled < before)
                and change.to >= from_moment
            ),
            default=None,
        )

    def earliest_firing(self, moment: datetime) -> datetime:
        """The earliest scheduled time of an occurrence that fires at or after ``moment``:
        ``moment``, or the occurrence before it whose flexible window or calendar shift carries
        its fire to ``moment`` or later; past the occurrence after it whose window around it
        carries its fire before ``moment``."""
        last = self.schedule.last_before(moment)
        if last is not None and self.fire_time_of(ceil_ms(last)) >= moment:
            return last
        if self.schedule.fire_lead:  # a window around: the next occurrence may fire before it
            first = self.schedule.first_fire_time(moment)
            if first is not None and self.fire_time_of(ceil_ms(first)) < moment:
                return first + _MICROSECOND
        return moment

    def is_skipped(self, fire_time: datetime) -> bool:
        change = self.change_of(self.origin_of(fire_time))
        return change is not None and change.to is None

    @property
    def coming_changes(self) -> tuple[OccurrenceChange, ...]:
        """The changes of the occurrence the record is at and those after it: the ones before
        are done with (dropped when a change is written, and the record sealed again)."""
        if self.execution_time is None:
            return ()
        origin = self.origin_of(self.execution_time)
        return tuple(c for c in self.occurrence_changes if c.scheduled >= origin)

    def knows_start(self, event_id: str) -> bool:
        """Whether the Start event ``event_id`` reached this record already: its own Start, the
        one waiting in the lock, or one it moved past or answered as a repeat."""
        if event_id in (self.start_event_id, self._waiting_start):
            return True
        return start_mark(event_id) in self.superseded_starts

    @property
    def _waiting_start(self) -> str | None:
        """The event id of the Start (or other change) waiting in the lock, if any."""
        return self.deferred.event_id if self.deferred else None

    # Each returns the next version; what else it changes is spelled out field by field in a
    # ``replace`` the type checker holds to the record's fields.
    def _moved(
        self, now: datetime, status: Status, reason: str, limit: int, noted: bool = True
    ) -> Self:
        """The next version in ``status``, the transition kept (bounded to ``limit``) unless not
        ``noted`` (a fire's claim and its ordinary ending: its history entry says it)."""
        transitions = self.transitions
        if noted and (status != self.status or reason):
            transitions = (*transitions, Transition(now, self.status, status, reason))[-limit:]
        return replace(
            self, status=status, version=self.version + 1, updated_at=now, transitions=transitions
        )

    def _starting_from(self, transition: str, statuses: frozenset[Status] | Status) -> None:
        """A transition's precondition: the record is in one of ``statuses``."""
        allowed = statuses if isinstance(statuses, frozenset) else frozenset({statuses})
        if self.status not in allowed:
            expected = " or ".join(sorted(allowed))
            raise TransitionRefused(self.id, transition, f"it is {self.status}, not {expected}")

    def _touched(self, now: datetime) -> Self:
        """The next version, its status unmoved."""
        return replace(self, version=self.version + 1, updated_at=now)

    def sealed(self, seal: str | None) -> Self:
        return replace(self, seal=seal)


@dataclass(frozen=True)
class Limits:
    """Bounds on what a record keeps, and how long a finished one lives."""

    history: int = 20
    transitions: int = 20
    finished_ttl: timedelta = timedelta(days=30)

    def expiry(self, now: datetime) -> int:
        return int((now + self.finished_ttl).timestamp())
