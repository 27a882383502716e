"""The action record: what is scheduled, where its fires stand, and what happened.

Pure: every transition takes ``now`` and returns a new ``Action``; nothing here reads a clock
or talks to AWS. The records store persists it; the use cases decide which transition.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from tickwork.domain.backfill import Backfilled, BackfillRequest, without
from tickwork.domain.catch_up import DEFAULT_CATCH_UP, CatchUp
from tickwork.domain.errors import TransitionRefused
from tickwork.domain.execution import same_execution
from tickwork.domain.fire import FireKey, Outcome, Trigger
from tickwork.domain.fire_ending import UnknownOutcomePolicy
from tickwork.domain.identifiers import DEFAULT_GROUP
from tickwork.domain.occurrence_changes import MAX_CHANGES, OccurrenceChange
from tickwork.domain.schedule import Schedule
from tickwork.domain.steering import (
    MAX_UNRESOLVED,
    Deferred,
    FailedFire,
    FailurePolicy,
    ManualFire,
    ManualFires,
    MissedFire,
    Pause,
    idempotency_key,
)
from tickwork.domain.times import ceil_ms

if TYPE_CHECKING:
    from tickwork.domain.start_request import StartRequest

__all__ = [
    "ACTIVE",
    "FINISHED",
    "LIVE",
    "Action",
    "Limits",
    "Occurrence",
    "Status",
    "Transition",
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


def _remember(marks: tuple[str, ...], earlier: str | None, now: str | None) -> tuple[str, ...]:
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


@dataclass(frozen=True)
class Transition:
    at: datetime
    from_status: Status | None
    to_status: Status
    reason: str


@dataclass(frozen=True)
class Action:
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
    # New with every schedule the id is given (stored as ``chain``): part of each fire's
    # idempotency key, so no two schedules of one id ever share a key.
    lineage: str = ""
    pause: Pause | None = None  # set while paused (kept by a replace of a paused action)
    deferred: Deferred | None = None  # waits for the imminent fire (inside the lock)
    manual: ManualFires = field(default_factory=ManualFires)  # fires an operator asked for
    unresolved: tuple[FailedFire, ...] = ()  # failed fires not retried yet
    role_arn: str | None = None  # the execution role its target is reached with
    # When a change was last applied to it (created, replaced, updated, cancelled, paused,
    # resumed, a fire asked for): a signed request older than this is stale. Fires leave it.
    changed_at: datetime | None = None
    # Set while the next fire is parked: further away than LaunchAheadSeconds, it has no
    # execution yet, and the pump starts one at this moment (fire.pump).
    launch_at: datetime | None = None
    # Occurrences skipped or moved by request (domain.occurrence_changes), in time order; each
    # leaves once its occurrence is recorded.
    occurrence_changes: tuple[OccurrenceChange, ...] = ()
    # Set by the watchdog when the fire the record is at had not happened by its time plus the
    # grace (fire.watchdog); it stands for that fire only.
    missed: MissedFire | None = None
    # Backfill: the spans of past scheduled times run once each, and the backfill still running
    backfilled: tuple[Backfilled, ...] = ()
    backfill: BackfillRequest | None = None

    # --- creation ---------------------------------------------------------------------------
    @classmethod
    def scheduled(
        cls,
        action_id: str,
        request: StartRequest,
        first_fire: datetime,
        now: datetime,
        spec_hash: str,
        event_id: str | None,
        limits: Limits,
        replacing: Action | None = None,
    ) -> Action:
        """A new action for a Start request, or the next generation of ``replacing``: a new
        schedule from occurrence 1, keeping the record's creation time and history. A paused
        action stays paused (its next fire is computed when it is resumed)."""
        paused = replacing is not None and replacing.status == Status.PAUSED
        status = Status.PAUSED if paused else Status.PENDING
        transition = Transition(
            now,
            replacing.status if replacing else None,
            status,
            "replaced" if replacing else "created",
        )
        generation = replacing.generation + 1 if replacing else 1
        created_at = replacing.created_at if replacing else now
        return cls(
            id=action_id,
            action=request.action,
            data=request.data,
            metadata=request.metadata,
            schedule=request.schedule,
            catch_up=request.catch_up,
            status=status,
            execution_time=ceil_ms(first_fire),
            occurrence=1,
            generation=generation,
            version=replacing.version + 1 if replacing else 1,
            created_at=created_at,
            updated_at=now,
            spec_hash=spec_hash,
            start_event_id=event_id,
            superseded_starts=replacing.moved_past(event_id) if replacing else (),
            request=request.detail,
            history=replacing.history if replacing else (),
            transitions=(*(replacing.transitions if replacing else ()), transition)[
                -limits.transitions :
            ],
            group=request.group,
            on_failure=request.on_failure,
            on_unknown_outcome=request.on_unknown_outcome,
            role_arn=request.role_arn,
            lineage=_lineage(action_id, created_at, generation),
            pause=replacing.pause if paused and replacing else None,
            changed_at=now,
            backfilled=replacing.backfills_kept(request.schedule) if replacing else (),
        )

    # --- derived, seed-schema compatible views -------------------------------------------
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
        """A fire failed and nobody has retried it yet (or the action ended FAILED), or the
        fire it is at was found missed and has still not happened."""
        return self.status == Status.FAILED or bool(self.unresolved) or self.missing_fire

    @property
    def missing_fire(self) -> bool:
        """The watchdog found the fire the record is at missed, and it has not happened yet."""
        missed = self.missed
        return (
            missed is not None
            and self.status == Status.PENDING
            and (missed.generation, missed.occurrence) == (self.generation, self.occurrence)
        )

    def noted_missed(self, now: datetime) -> Action:
        """The watchdog's note: the fire the record is at is missed (a need of attention)."""
        assert self.execution_time is not None
        note = MissedFire(self.generation, self.occurrence, self.execution_time, now)
        return replace(self._touched(now), missed=note)

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
        """Inside the lock window the imminent fire is fixed: it happens as planned. A one-off
        can then no longer be changed; a recurrence's change waits for it (``deferring``)."""
        if self.status == Status.IN_PROGRESS:
            return True
        return (
            self.status == Status.PENDING
            and self.execution_time is not None
            and self.execution_time - now <= lock
        )

    # --- transitions ----------------------------------------------------------------------
    # Each returns the next version; what else it changes is spelled out field by field in a
    # ``replace`` the type checker holds to the record's fields.
    def _moved(self, now: datetime, status: Status, reason: str, limit: int) -> Action:
        """The next version in ``status``, the transition recorded (bounded to ``limit``)."""
        transitions = self.transitions
        if status != self.status or reason:
            transitions = (*transitions, Transition(now, self.status, status, reason))[-limit:]
        return replace(
            self, status=status, version=self.version + 1, updated_at=now, transitions=transitions
        )

    def _touched(self, now: datetime) -> Action:
        """The next version, its status unmoved."""
        return replace(self, version=self.version + 1, updated_at=now)

    def holds_claim(self, execution_arn: str) -> bool:
        """Whether that execution holds the claim on the fire the record is at."""
        return self.status == Status.IN_PROGRESS and same_execution(self.claimed_by, execution_arn)

    def claimed(self, now: datetime, execution_arn: str, limit: int) -> Action:
        """PENDING → IN_PROGRESS: the execution (its ARN), which the record names, may run the
        fire now."""
        if self.status != Status.PENDING or not same_execution(self.execution_arn, execution_arn):
            raise TransitionRefused(
                self.id, "claimed", f"it is {self.status}, naming {self.execution_arn}"
            )
        moved = self._moved(now, Status.IN_PROGRESS, "claimed", limit)
        return replace(moved, claimed_by=execution_arn)

    def handed_over(self, now: datetime, holder: str, to_execution_arn: str, limit: int) -> Action:
        """The batch ``holder``, holding the claim, hands it and the fire to the fire's own lone
        execution, which retries it alone (docs/protocol.md, "A handed-over fire"): the record
        names it before it is started, so nothing but the record decides who may run the fire."""
        if not self.holds_claim(holder):
            raise TransitionRefused(self.id, "handed over", f"{holder} holds no claim on it")
        moved = self._moved(now, Status.IN_PROGRESS, "handed over to its own execution", limit)
        return replace(moved, claimed_by=to_execution_arn, execution_arn=to_execution_arn)

    def released(
        self, now: datetime, holder: str, limit: int, reason: str = "claim released after an outage"
    ) -> Action:
        """Give up the claim of ``holder``, whose execution was lost (or could not take it on):
        the fire runs again."""
        if not self.holds_claim(holder):
            raise TransitionRefused(self.id, "released", f"{holder} holds no claim on it")
        moved = self._moved(now, Status.PENDING, reason, limit)
        return replace(moved, claimed_by=None)

    def fired(
        self,
        now: datetime,
        record: Occurrence,
        next_fire: datetime | None,
        result: dict[str, Any] | None,
        limits: Limits,
    ) -> Action:
        if record.outcome is Outcome.NO_ACTION:
            status, reason = Status.NO_ACTION, "no fulfillment for this action"
        elif next_fire is None:
            done = "skipped" if record.outcome is Outcome.SKIPPED else "fired"
            status, reason = (
                Status.COMPLETED,
                f"occurrence {record.occurrence} {done}; it was the last",
            )
        else:
            done = "skipped" if record.outcome is Outcome.SKIPPED else "fired"
            status, reason = Status.PENDING, f"occurrence {record.occurrence} {done}"
        moved = replace(
            self._moved(now, status, reason, limits.transitions),
            history=(*self.history, record)[-limits.history :],
            last_result=result,
            retry_count=record.attempts - 1,
            claimed_by=None,
            last_error=None,
        )
        if status is Status.PENDING:
            assert next_fire is not None
            return moved._next_occurrence(next_fire)
        return replace(moved, ttl=limits.expiry(now))

    def failed(
        self, now: datetime, record: Occurrence, next_fire: datetime | None, limits: Limits
    ) -> Action:
        """The scheduled fire failed past its retries: recorded, retryable by hand, and then
        what the failure policy says — CONTINUE with ``next_fire``, PAUSE before it (a resume
        goes on from there: the failed occurrence is not run again but by a retry by hand, with
        its own key), or STOP (FAILED). After the last fire, CONTINUE and PAUSE complete."""
        what = f"occurrence {record.occurrence} failed"
        policy = self.failure_policy
        if policy is FailurePolicy.STOP:
            status, reason = Status.FAILED, what
        elif policy is FailurePolicy.PAUSE and next_fire is not None:
            status, reason = Status.PAUSED, f"{what}; paused (onFailure PAUSE)"
        elif next_fire is None:
            status, reason = Status.COMPLETED, f"{what}; it was the last"
        else:
            status, reason = Status.PENDING, f"{what}; continuing (onFailure CONTINUE)"
        moved = replace(
            self._moved(now, status, reason, limits.transitions),
            history=(*self.history, record)[-limits.history :],
            last_error=record.error,
            retry_count=max(record.attempts - 1, self.retry_count),
            claimed_by=None,
        )
        if policy is FailurePolicy.STOP:
            return replace(moved, ttl=limits.expiry(now))
        failed_fire = FailedFire(
            record.occurrence, record.scheduled_time, self.key_of(record.occurrence), record.error
        )
        moved = replace(moved, unresolved=(*self.unresolved, failed_fire)[-MAX_UNRESOLVED:])
        if status is Status.COMPLETED:
            return replace(moved, ttl=limits.expiry(now))
        assert next_fire is not None
        moved = moved._next_occurrence(next_fire)
        if status is Status.PAUSED:
            note = f"{what}: {record.error or 'see history'}"[:500]
            return replace(moved, generation=self.generation + 1, pause=Pause(now, note))
        return moved

    def _next_occurrence(self, next_fire: datetime) -> Action:
        """On to the next occurrence: its fire time, no execution yet. (The changes of the
        occurrences before it stay, under the seal, until the next change is sealed.)"""
        return replace(
            self, execution_time=next_fire, occurrence=self.occurrence + 1, execution_arn=None
        )

    # --- single occurrences ------------------------------------------------------------------
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

    def occurrence_changed(
        self, now: datetime, change: OccurrenceChange, reason: str, limits: Limits
    ) -> Action:
        """``change`` asked (replacing any earlier one of that occurrence). A move of the fire
        the record is at moves that fire: its waiting execution is superseded (a new
        generation), and the caller plans and launches the new one."""
        kept = [c for c in self.coming_changes if c.scheduled != change.scheduled]
        changes = tuple(sorted([*kept, change], key=lambda c: c.scheduled))[-MAX_CHANGES:]
        return self._refired(now, changes, change.scheduled, reason, limits)

    def occurrence_restored(
        self, now: datetime, scheduled: datetime, reason: str, limits: Limits
    ) -> Action:
        """The change of the occurrence scheduled at ``scheduled`` undone: it fires as its
        schedule says."""
        changes = tuple(c for c in self.coming_changes if c.scheduled != scheduled)
        return self._refired(now, changes, scheduled, reason, limits)

    @property
    def coming_changes(self) -> tuple[OccurrenceChange, ...]:
        """The changes of the occurrence the record is at and those after it: the ones before
        are done with (dropped when a change is written, and the record sealed again)."""
        if self.execution_time is None:
            return ()
        origin = self.origin_of(self.execution_time)
        return tuple(c for c in self.occurrence_changes if c.scheduled >= origin)

    def _refired(
        self,
        now: datetime,
        changes: tuple[OccurrenceChange, ...],
        scheduled: datetime,
        reason: str,
        limits: Limits,
    ) -> Action:
        moved = replace(
            self._moved(now, self.status, reason, limits.transitions),
            occurrence_changes=changes,
            changed_at=now,
        )
        at = self.execution_time
        if at is None or self.origin_of(at) != scheduled:
            return moved
        fire_at = moved.fire_time_of(scheduled)
        if fire_at == at or self.status not in (Status.PENDING, Status.PAUSED):
            return moved
        if self.status is Status.PAUSED:  # no execution waits: a resume starts the moved one
            return replace(moved, execution_time=fire_at)
        return replace(
            moved,
            execution_time=fire_at,
            generation=self.generation + 1,
            execution_arn=None,
            launch_at=None,
        )

    # --- steering ---------------------------------------------------------------------------
    def paused(self, now: datetime, note: str | None, limits: Limits) -> Action:
        """No fire until resumed: the waiting execution is superseded (a new generation)."""
        reason = f"paused: {note}" if note else "paused"
        return replace(
            self._moved(now, Status.PAUSED, reason, limits.transitions),
            generation=self.generation + 1,
            execution_arn=None,
            claimed_by=None,
            pause=Pause(now, note),
            deferred=None,
            changed_at=now,
        )

    def resumed(
        self, now: datetime, next_fire: datetime, note: str | None, limits: Limits
    ) -> Action:
        reason = f"resumed: {note}" if note else "resumed"
        return replace(
            self._moved(now, Status.PENDING, reason, limits.transitions),
            execution_time=next_fire,
            execution_arn=None,
            pause=None,
            changed_at=now,
        )

    def missed_while_paused(self, now: datetime, limits: Limits) -> Action:
        """A one-off resumed after its time: it is not caught up, and the action completes."""
        assert self.execution_time is not None
        record = Occurrence(
            occurrence=self.occurrence,
            scheduled_time=self.execution_time,
            actual_time=now,
            attempts=0,
            outcome=Outcome.SKIPPED,
            error="missed while paused",
            late_ms=int((now - self.execution_time).total_seconds() * 1000),
        )
        reason = "resumed after its time: missed while paused, not caught up"
        return replace(
            self._moved(now, Status.COMPLETED, reason, limits.transitions),
            history=(*self.history, record)[-limits.history :],
            pause=None,
            ttl=limits.expiry(now),
            changed_at=now,
        )

    def fired_now(self, now: datetime, limits: Limits) -> Action:
        """A one-off asked to run now: its one fire moves to now (a new generation)."""
        return replace(
            self._moved(now, Status.PENDING, "run now by hand", limits.transitions),
            generation=self.generation + 1,
            execution_time=now,
            execution_arn=None,
            pause=None,
            deferred=None,
            changed_at=now,
        )

    def deferring(self, now: datetime, change: Deferred) -> Action:
        """A change that waits for the imminent fire (the latest one asked for wins)."""
        return replace(
            self._touched(now),
            deferred=change,
            changed_at=now,
            superseded_starts=_remember(
                self.superseded_starts, self._waiting_start, change.event_id
            ),
        )

    def moved_past(self, event_id: str | None) -> tuple[str, ...]:
        """The Start events this record remembers having moved past once the Start
        ``event_id`` replaces it: its own Start's, and a waiting one's it drops."""
        remembered = _remember(self.superseded_starts, self.start_event_id, event_id)
        return _remember(remembered, self._waiting_start, event_id)

    def knowing_start(self, now: datetime, event_id: str) -> Action:
        """The Start ``event_id`` answered as a repeat of this record's request (its detail
        under another event id, a publisher's retry): remembered as the record's own are, so
        that delivered again after a later Start it changes nothing. Itself when known."""
        if self.knows_start(event_id):
            return self
        marks = _remember(self.superseded_starts, event_id, None)
        return replace(self._touched(now), superseded_starts=marks)

    def remembering(self, event_id: str | None) -> Action:
        """This version, knowing the steering event ``event_id`` it applies (a skip, a move):
        delivered again later, it changes nothing."""
        if not event_id:
            return self
        return replace(self, superseded_starts=_remember(self.superseded_starts, event_id, None))

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

    def without_deferred(self) -> Action:
        return replace(self, deferred=None)

    def manual_requested(
        self,
        now: datetime,
        trigger: Trigger,
        occurrence: int = 0,
        key: str = "",
        request_id: str | None = None,
        scheduled: datetime | None = None,
    ) -> tuple[Action, ManualFire]:
        number = self.manual.count + 1
        key = key or self.key_of(occurrence, number)
        fire = ManualFire(
            number,
            trigger,
            now,
            occurrence,
            key,
            request_id,
            generation=self.generation,
            scheduled=scheduled,
        )
        return replace(self._touched(now), manual=self.manual.requested(fire), changed_at=now), fire

    def backfilling(
        self,
        now: datetime,
        launched: tuple[datetime, ...],
        spans: tuple[Backfilled, ...],
        still: BackfillRequest | None,
        asked: bool = True,
    ) -> tuple[Action, tuple[ManualFire, ...]]:
        """The occurrences ``launched`` asked for as backfilled fires, the backfilled ``spans``
        that now hold them, and the backfill ``still`` running (None: done). ``asked``: by a
        request (a change the record's ``changed_at`` marks); else the backfill going on by
        itself, which changes nothing a user asked for."""
        action, fires = self, []
        for scheduled in launched:
            action, fire = action.manual_requested(now, Trigger.BACKFILL, scheduled=scheduled)
            fires.append(fire)
        changed_at = action.changed_at if asked else self.changed_at
        return replace(action, backfilled=spans, backfill=still, changed_at=changed_at), tuple(
            fires
        )

    def backfills_kept(self, schedule: Schedule) -> tuple[Backfilled, ...]:
        """The backfilled spans a replace by ``schedule`` keeps: those that ran, while the
        schedule fires at the same times (another schedule's occurrences are others)."""

        def times(kept: Schedule) -> dict[str, Any]:
            return {k: v for k, v in kept.to_dict().items() if k not in ("calendar", "window")}

        return self._backfills_run() if times(schedule) == times(self.schedule) else ()

    def _backfills_run(self) -> tuple[Backfilled, ...]:
        """The backfilled spans without the fires still in flight (ended unrun by a replace or a
        cancel: a later backfill runs them)."""
        dropped = [
            m.scheduled
            for m in self.manual.in_flight
            if m.trigger is Trigger.BACKFILL and m.scheduled is not None
        ]
        return without(self.backfilled, dropped)

    def manual_claimed(self, now: datetime, number: int, execution_arn: str | None) -> Action:
        """Claimed by an execution, by its ARN (None: released, its execution lost)."""
        return replace(self._touched(now), manual=self.manual.claimed(number, execution_arn))

    def manual_recorded(
        self, now: datetime, number: int, record: Occurrence, key: str, limits: Limits
    ) -> Action:
        """A manual fire's tick or failure: into the history, out of the fires in flight; a
        fire that succeeded resolves the failure it retried, one that failed needs attention."""
        unresolved = tuple(u for u in self.unresolved if u.idempotency_key != key)
        if record.outcome is Outcome.FAILED:
            unresolved = (
                *unresolved,
                FailedFire(record.occurrence, record.scheduled_time, key, record.error, number),
            )[-MAX_UNRESOLVED:]
        return replace(
            self._touched(now),
            manual=self.manual.recorded(number),
            history=(*self.history, record)[-limits.history :],
            unresolved=unresolved,
        )

    def cancelled(self, now: datetime, limits: Limits, reason: str = "cancelled") -> Action:
        return replace(
            self._moved(now, Status.CANCELLED, reason, limits.transitions),
            generation=self.generation + 1,
            ttl=limits.expiry(now),
            deferred=None,
            manual=replace(self.manual, in_flight=()),
            backfill=None,
            backfilled=self._backfills_run(),
            pause=None,
            changed_at=now,
        )

    def retried(self, now: datetime, limits: Limits) -> Action:
        """The failed occurrence runs again now. A moved one is moved to now, so that the
        occurrence after it is still counted from its own scheduled time (never itself again)."""
        changes = self.occurrence_changes
        if self.execution_time is not None:
            origin = self.origin_of(self.execution_time)
            if origin != self.execution_time:
                changes = tuple(replace(c, to=now) if c.scheduled == origin else c for c in changes)
        return replace(
            self._moved(now, Status.PENDING, "retried by hand", limits.transitions),
            occurrence_changes=changes,
            generation=self.generation + 1,
            execution_time=now,
            ttl=None,
            retry_count=0,
            last_error=None,
            execution_arn=None,
            changed_at=now,
        )

    def noted_failure(self, now: datetime, error: str, retry_count: int) -> Action:
        """An attempt failed and will be retried (or reported): keep its error on the record."""
        return replace(self._touched(now), last_error=error[:1000], retry_count=retry_count)

    def with_execution(self, now: datetime, execution_arn: str) -> Action:
        return replace(self._touched(now), execution_arn=execution_arn)

    @property
    def is_parked(self) -> bool:
        """Its next fire waits in the table, with no execution yet."""
        return self.status == Status.PENDING and self.launch_at is not None

    def launched(self, now: datetime, execution_arn: str) -> Action:
        """The pump started the parked fire's execution."""
        return replace(self._touched(now), execution_arn=execution_arn, launch_at=None)

    def parked_again(self, now: datetime, launch_at: datetime) -> Action:
        """Its execution could not be started (a quota, throttling): the pump tries again."""
        return replace(self._touched(now), execution_arn=None, launch_at=launch_at)

    # --- before the first write of a version ---------------------------------------------------
    def planned(self, execution_arn: str) -> Action:
        """The execution this version's fire will run in (named before it is started)."""
        return replace(self, execution_arn=execution_arn, launch_at=None)

    def parked(self, launch_at: datetime) -> Action:
        """This version's fire waits in the table; the pump starts its execution at
        ``launch_at``."""
        return replace(self, execution_arn=None, launch_at=launch_at)

    def sealed(self, seal: str | None) -> Action:
        return replace(self, seal=seal)


def _lineage(action_id: str, created_at: datetime, generation: int) -> str:
    """New with each schedule an id is given (a replace, an update, a purge and re-create)."""
    text = f"{action_id}|{created_at.isoformat()}|{generation}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Limits:
    """Bounds on what a record keeps, and how long a finished one lives."""

    history: int = 20
    transitions: int = 20
    finished_ttl: timedelta = timedelta(days=30)

    def expiry(self, now: datetime) -> int:
        return int((now + self.finished_ttl).timestamp())
