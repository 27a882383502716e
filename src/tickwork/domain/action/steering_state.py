"""The transitions users and publishers ask of an action: its creation from a Start (or a
replace), pause and resume, cancel, run now and retry by hand, a change deferred to after the
imminent fire, the Start events it remembers, one occurrence skipped or moved, a backfill.
Each checks its own precondition and raises ``TransitionRefused`` otherwise. Pure: each takes
``now`` and returns the next version.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Self

from tickwork.domain import steering
from tickwork.domain.action.record import (
    ACTIVE,
    FINISHED,
    LIVE,
    ActionRecord,
    Limits,
    Occurrence,
    Status,
    Transition,
    remember_start,
)
from tickwork.domain.backfill import Backfilled, BackfillRequest, without
from tickwork.domain.errors import ManualFiresInFlight, TransitionRefused
from tickwork.domain.fire import Outcome, Trigger
from tickwork.domain.fire_kinds import RANGE_TRIGGERS
from tickwork.domain.occurrence_changes import MAX_CHANGES, OccurrenceChange
from tickwork.domain.schedule import Schedule
from tickwork.domain.steering import MAX_MANUAL_IN_FLIGHT, Deferred, ManualFire, Pause, held_note
from tickwork.domain.times import ceil_ms

if TYPE_CHECKING:
    from tickwork.domain.start_request import StartRequest

__all__ = ["SteeringState"]


class SteeringState(ActionRecord):
    """The user's side of an action."""

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
        replacing: Self | None = None,
    ) -> Self:
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
            policy=request.policy,
            lineage=_lineage(action_id, created_at, generation),
            pause=replacing.pause if paused and replacing else None,
            changed_at=now,
            backfilled=replacing.backfills_kept(request.schedule) if replacing else (),
            manual=replacing.manual.only_under_way() if replacing else steering.ManualFires(),
        )

    def paused(self, now: datetime, note: str | None, limits: Limits) -> Self:
        """No fire until resumed: the waiting execution is superseded (a new generation)."""
        self._starting_from("paused", ACTIVE)
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

    def resumed(self, now: datetime, next_fire: datetime, note: str | None, limits: Limits) -> Self:
        """On from ``next_fire``, as the record says; its waiting execution is made anew."""
        self._starting_from("resumed", Status.PAUSED)
        reason = f"resumed: {note}" if note else "resumed"
        return replace(
            self._moved(now, Status.PENDING, reason, limits.transitions),
            execution_time=next_fire,
            execution_arn=None,
            pause=None,
            changed_at=now,
        )

    def held(self, now: datetime, calendar: str, limits: Limits) -> Self:
        """Its calendar allows none of its fires within the search bound: paused on it (a new
        generation supersedes a waiting execution), never ended on its account; it needs
        attention, and resumes once the calendar allows a fire again."""
        self._starting_from("held", frozenset({Status.PENDING, Status.PAUSED}))
        note = held_note(calendar)
        return replace(
            self._moved(now, Status.PAUSED, note, limits.transitions),
            generation=self.generation + (1 if self.status is Status.PENDING else 0),
            execution_arn=None,
            launch_at=None,
            claimed_by=None,
            pause=Pause(now, note, held_by=calendar),
            deferred=None,
        )

    def planned_again(self, now: datetime, fire: datetime, why: str, limits: Limits) -> Self:
        """Its fire planned again at ``fire`` (its calendar changed: an earlier fire allowed),
        a new generation: the execution waiting for the old time ends quietly."""
        self._starting_from("planned again", Status.PENDING)
        return replace(
            self._moved(now, Status.PENDING, why, limits.transitions),
            generation=self.generation + 1,
            execution_time=fire,
            execution_arn=None,
            launch_at=None,
            missed=None,
        )

    def missed_while_paused(self, now: datetime, limits: Limits, caught_up: bool = False) -> Self:
        """A one-off resumed after its time: it is not caught up, and the action completes."""
        self._starting_from("resumed", Status.PAUSED)
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
        reason = f"resumed after its time: {'caught up' if caught_up else 'not caught up'}"
        return replace(
            self._moved(now, Status.COMPLETED, reason, limits.transitions),
            history=(*self.history, record)[-limits.history :],
            pause=None,
            ttl=limits.expiry(now),
            changed_at=now,
        )

    def fired_now(self, now: datetime, limits: Limits) -> Self:
        """A one-off asked to run now: its one fire moves to now (a new generation)."""
        self._starting_from("run now", LIVE)
        return replace(
            self._moved(now, Status.PENDING, "run now by hand", limits.transitions),
            generation=self.generation + 1,
            execution_time=now,
            execution_arn=None,
            pause=None,
            deferred=None,
            changed_at=now,
        )

    def cancelled(self, now: datetime, limits: Limits, reason: str = "cancelled") -> Self:
        """Cancelled: no fire more (a recurrence COMPLETED by the fire its cancel waited for
        ends CANCELLED too)."""
        self._starting_from("cancelled", LIVE | {Status.COMPLETED})
        return replace(
            self._moved(now, Status.CANCELLED, reason, limits.transitions),
            generation=self.generation + 1,
            ttl=limits.expiry(now),
            deferred=None,
            manual=self.manual.only_under_way(),
            backfill=None,
            backfilled=self._backfills_run(),
            pause=None,
            changed_at=now,
        )

    def retried(self, now: datetime, limits: Limits) -> Self:
        """The failed occurrence runs again now. A moved one is moved to now, so that the
        occurrence after it is still counted from its own scheduled time (never itself again)."""
        self._starting_from("retried", Status.FAILED)
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

    def deferring(self, now: datetime, change: Deferred) -> Self:
        """A change that waits for the imminent fire (the latest one asked for wins)."""
        self._starting_from("given a deferred change", ACTIVE)
        return replace(
            self._touched(now),
            deferred=change,
            changed_at=now,
            superseded_starts=remember_start(
                self.superseded_starts, self._waiting_start, change.event_id
            ),
        )

    def withdrawing_deferred(self, now: datetime) -> Self:
        """A waiting change withdrawn (a resume of a pause waiting for the fire under way)."""
        self._starting_from("withdrawn a deferred change", ACTIVE)
        return replace(self._touched(now), deferred=None, changed_at=now)

    def moved_past(self, event_id: str | None) -> tuple[str, ...]:
        """The Start events this record remembers having moved past once the Start
        ``event_id`` replaces it: its own Start's, and a waiting one's it drops."""
        remembered = remember_start(self.superseded_starts, self.start_event_id, event_id)
        return remember_start(remembered, self._waiting_start, event_id)

    def knowing_start(self, now: datetime, event_id: str) -> Self:
        """The Start ``event_id`` answered as a repeat of this record's request (its detail
        under another event id, a publisher's retry): remembered as the record's own are, so
        that delivered again after a later Start it changes nothing. Itself when known."""
        if self.knows_start(event_id):
            return self
        marks = remember_start(self.superseded_starts, event_id, None)
        return replace(self._touched(now), superseded_starts=marks)

    def remembering(self, event_id: str | None) -> Self:
        """This version, knowing the steering event ``event_id`` it applies (a skip, a move):
        delivered again later, it changes nothing."""
        if not event_id:
            return self
        return replace(
            self, superseded_starts=remember_start(self.superseded_starts, event_id, None)
        )

    def manual_requested(
        self,
        now: datetime,
        trigger: Trigger,
        occurrence: int = 0,
        key: str = "",
        request_id: str | None = None,
        scheduled: datetime | None = None,
    ) -> tuple[Self, ManualFire]:
        if len(self.manual.in_flight) >= MAX_MANUAL_IN_FLIGHT:
            raise ManualFiresInFlight(self.id, MAX_MANUAL_IN_FLIGHT)
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
        trigger: Trigger = Trigger.BACKFILL,
    ) -> tuple[Self, tuple[ManualFire, ...]]:
        """The occurrences ``launched`` asked for as backfilled fires, the backfilled ``spans``
        that now hold them, and the backfill ``still`` running (None: done). ``asked``: by a
        request (a change the record's ``changed_at`` marks); else the backfill going on by
        itself, which changes nothing a user asked for."""
        action, fires = self, []
        for scheduled in launched:
            action, fire = action.manual_requested(now, trigger, scheduled=scheduled)
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

    def _recurring_and_live(self, transition: str) -> None:
        """An occurrence change's precondition: a recurrence, not finished."""
        if not self.repeat or self.status in FINISHED:
            raise TransitionRefused(
                self.id,
                f"an occurrence {transition}",
                f"it is a {self.schedule.kind} action, {self.status}",
            )

    def _backfills_run(self) -> tuple[Backfilled, ...]:
        """The backfilled spans without the fires still in flight (ended unrun by a replace or a
        cancel: a later backfill runs them)."""
        dropped = [
            m.scheduled
            for m in self.manual.in_flight
            if m.trigger in RANGE_TRIGGERS and m.scheduled is not None
        ]
        return without(self.backfilled, dropped)

    def occurrence_changed(
        self, now: datetime, change: OccurrenceChange, reason: str, limits: Limits
    ) -> Self:
        """``change`` asked (replacing any earlier one of that occurrence). A move of the fire
        the record is at moves that fire: its waiting execution is superseded (a new
        generation), and the caller plans and launches the new one."""
        self._recurring_and_live("changed")
        kept = [c for c in self.coming_changes if c.scheduled != change.scheduled]
        changes = tuple(sorted([*kept, change], key=lambda c: c.scheduled))[-MAX_CHANGES:]
        return self._refired(now, changes, change.scheduled, reason, limits)

    def occurrence_restored(
        self, now: datetime, scheduled: datetime, reason: str, limits: Limits
    ) -> Self:
        """The change of the occurrence scheduled at ``scheduled`` undone: it fires as its
        schedule says."""
        self._recurring_and_live("restored")
        changes = tuple(c for c in self.coming_changes if c.scheduled != scheduled)
        return self._refired(now, changes, scheduled, reason, limits)

    def _refired(
        self,
        now: datetime,
        changes: tuple[OccurrenceChange, ...],
        scheduled: datetime,
        reason: str,
        limits: Limits,
    ) -> Self:
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


def _lineage(action_id: str, created_at: datetime, generation: int) -> str:
    """New with each schedule an id is given (a replace, an update, a purge and re-create)."""
    text = f"{action_id}|{created_at.isoformat()}|{generation}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]
