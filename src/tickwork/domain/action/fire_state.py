"""The transitions of a fire, as the fire protocol makes them (docs/protocol.md): claimed, handed
over, released, recorded (fired, failed), parked, launched, its execution named, a manual fire's
claim and ending. Each checks its own precondition — the state it starts from — and raises
``TransitionRefused`` otherwise: a rule's guard (``fire.writes``) decides whether to ask for it.

Pure: each takes ``now`` and returns the next version.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any, Self

from tickwork.domain.action.following import NO_OVERLAP, Overlap
from tickwork.domain.action.record import ACTIVE, ActionRecord, Limits, Occurrence, Status
from tickwork.domain.errors import TransitionRefused
from tickwork.domain.execution import same_execution
from tickwork.domain.fire import Outcome, Trigger
from tickwork.domain.steering import (
    MAX_UNRESOLVED,
    FailedFire,
    FailurePolicy,
    ManualFire,
    MissedFire,
    Pause,
    TamperedCalendar,
    held_note,
)
from tickwork.domain.times import to_epoch_ms

__all__ = ["PARK_INDEX_MS", "FireState"]

# A fire parked to launch within this of its write is in the Parked index, and the pump names
# its execution as it launches it; one parked further ahead is found by its fire time (the
# pump's watermark on fire times had not passed it when it was written, whatever the clocks'
# and the index's lag up to this) and launched without a write (``parked_far``).
PARK_INDEX_MS = 20_000

_held = held_note


def _with(
    history: tuple[Occurrence, ...], record: Occurrence, overlap: Overlap, limits: Limits
) -> tuple[Occurrence, ...]:
    """The history with the fire's entry and, after it, those of the occurrences its overlap
    policy skipped (the latest of them: the fire's own entry always stays)."""
    skipped = overlap.skipped[-(limits.history - 1) :] if limits.history > 1 else ()
    return (*history, record, *skipped)[-limits.history :]


class FireState(ActionRecord):
    """The fire's side of an action."""

    @property
    def parked_far(self) -> bool:
        """Parked to launch more than ``PARK_INDEX_MS`` after the write that parked it (later
        writes of the parked record change nothing of it: ``far_park``) — the
        default path of a fire further away than the horizon: the pump finds it by its fire
        time and starts its execution without a write (docs/protocol.md, "A lone fire"), so
        the record names none; the proved execution of its fire that claims it first runs it.
        One parked nearer its launch (due now, parked again) is in the Parked index, and the
        pump names its execution before starting it (**mark launched**)."""
        return self.is_parked and self.execution_arn is None and self.far_park

    def waits_for(self, execution_arn: str) -> bool:
        """PENDING, its fire this execution's to claim: the record names it, or names none
        because the fire is parked far (any proved execution of the fire the pump started)."""
        if self.status != Status.PENDING:
            return False
        return same_execution(self.execution_arn, execution_arn) or self.parked_far

    def claimed(self, now: datetime, execution_arn: str, limit: int) -> Self:
        """PENDING → IN_PROGRESS: the execution (its ARN), which the record names (or any, its
        fire parked far: ``waits_for``), may run the fire now; no longer parked."""
        if not self.waits_for(execution_arn):
            raise TransitionRefused(
                self.id, "claimed", f"it is {self.status}, naming {self.execution_arn}"
            )
        # (not a transition: the fire's history entry names the execution that claimed it)
        moved = self._moved(now, Status.IN_PROGRESS, "claimed", limit, noted=False)
        return replace(moved, claimed_by=execution_arn, claimed_at=now, launch_at=None)

    def noted_calendar_put(self) -> Self:
        """A calendar its schedule names was put while its fire is under way: the next version,
        nothing else changed (not even ``updatedAt``, by which a claim's age is judged), so
        that the claim holder's write reads the record, and the calendar, again."""
        self._starting_from("noted a calendar put", Status.IN_PROGRESS)
        return replace(self, version=self.version + 1)

    def handed_over(self, now: datetime, holder: str, to_execution_arn: str, limit: int) -> Self:
        """The batch ``holder``, holding the claim, hands it and the fire to the fire's own lone
        execution, which retries it alone (docs/protocol.md, "A handed-over fire"): the record
        names it before it is started, so nothing but the record decides who may run the fire."""
        if not self.holds_claim(holder):
            raise TransitionRefused(self.id, "handed over", f"{holder} holds no claim on it")
        moved = self._moved(now, Status.IN_PROGRESS, "handed over to its own execution", limit)
        return replace(moved, claimed_by=to_execution_arn, execution_arn=to_execution_arn)

    def handed_on(
        self,
        now: datetime,
        holder: str,
        next_fire: datetime,
        limit: int,
        overlap: Overlap = NO_OVERLAP,
    ) -> Self:
        """Overlap policy ALLOW_ALL: the fire ``holder`` claims, about to be retried, leaves its
        place in the schedule to the next occurrence (at ``next_fire``, no execution yet) and
        goes on beside it as a fire of its own — a manual entry of trigger SCHEDULED with the
        occurrence's number and key, claimed by the same execution — recorded beside the
        schedule, as a manual fire is (docs/protocol.md, "Overlap"). ``overlap``: the next came
        due already (a later attempt hands it on): it runs at once."""
        if not self.holds_claim(holder) or self.execution_time is None:
            raise TransitionRefused(self.id, "handed on", f"{holder} holds no claim on it")
        entry = ManualFire(
            number=self.manual.count + 1,
            trigger=Trigger.SCHEDULED,
            requested_at=now,
            occurrence=self.occurrence,
            idempotency_key=self.key_of(self.occurrence),
            claimed_by=holder,
            generation=self.generation,
            scheduled=self.execution_time,
            execution=holder,
            retries=self.retry_count,  # (its attempts so far were noted on the record)
        )
        why = f"occurrence {self.occurrence} is retried beside the next (overlapPolicy ALLOW_ALL)"
        moved = self._moved(now, Status.PENDING, why, limit)
        handed = replace(
            moved,
            manual=self.manual.requested(entry),
            claimed_by=None,
            retry_count=0,  # (the next occurrence's attempts and errors are its own)
            last_error=None,
        )
        return handed._next_occurrence(next_fire, overlap)

    def caught_up(self, count: int) -> Self:
        """``count`` occurrences that came due while it was paused run as catch-up fires on its
        resume: they are its own, so its schedule has as many fewer left (the next fire's
        number follows them)."""
        return replace(self, occurrence=self.occurrence + count) if count else self

    def released(
        self, now: datetime, holder: str, limit: int, reason: str = "claim released after an outage"
    ) -> Self:
        """Give up the claim of ``holder``, whose execution was lost (or could not take it on):
        the fire runs again."""
        if not self.holds_claim(holder):
            raise TransitionRefused(self.id, "released", f"{holder} holds no claim on it")
        moved = self._moved(now, Status.PENDING, reason, limit)
        return replace(moved, claimed_by=None, claimed_at=None)

    def _at_occurrence(self, transition: str, occurrence: int) -> None:
        if occurrence != self.occurrence:
            raise TransitionRefused(
                self.id, transition, f"it is at occurrence {self.occurrence}, not {occurrence}"
            )

    def fired(
        self,
        now: datetime,
        record: Occurrence,
        next_fire: datetime | None,
        result: dict[str, Any] | None,
        limits: Limits,
        held_by: str | None = None,
        overlap: Overlap = NO_OVERLAP,
    ) -> Self:
        """The fire the record is at ran (or ran nothing, or was skipped): into the history, and
        on to ``next_fire`` — or the end when there is none, unless the calendar ``held_by``
        is why there is none: then held (paused on it), never ended on its account. The
        occurrences its ``overlap`` policy passed over go into the history after it."""
        self._starting_from("recorded", ACTIVE)
        self._at_occurrence("recorded", record.occurrence)
        if record.outcome is Outcome.NO_ACTION:
            status, reason = Status.NO_ACTION, "no fulfillment for this action"
        elif next_fire is None and held_by is not None:
            done = "skipped" if record.outcome is Outcome.SKIPPED else "fired"
            status, reason = (
                Status.PAUSED,
                f"occurrence {record.occurrence} {done}; {_held(held_by)}",
            )
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
            # an ordinary fire is its history entry, not a transition: the bounded transitions
            # keep what changed the action (a record under 1 KB however busy it is)
            self._moved(now, status, reason, limits.transitions, noted=status != Status.PENDING),
            history=_with(self.history, record, overlap, limits),
            last_result=result,
            retry_count=record.attempts - 1,
            claimed_by=None,
            claimed_at=None,
            buffered=False,
            last_error=None,
        )
        if status is Status.PENDING:
            assert next_fire is not None
            return moved._next_occurrence(next_fire, overlap)
        if status is Status.PAUSED:
            assert held_by is not None
            return moved._held_after(now, held_by, overlap)
        return replace(moved, ttl=limits.expiry(now))

    def failed(
        self,
        now: datetime,
        record: Occurrence,
        next_fire: datetime | None,
        limits: Limits,
        held_by: str | None = None,
        overlap: Overlap = NO_OVERLAP,
    ) -> Self:
        """The scheduled fire failed past its retries: recorded, retryable by hand, and then
        what the failure policy says — CONTINUE with ``next_fire``, PAUSE before it (a resume
        goes on from there: the failed occurrence is not run again but by a retry by hand, with
        its own key), or STOP (FAILED). After the last fire, CONTINUE and PAUSE complete —
        unless the calendar ``held_by`` is why no fire is left: then held."""
        self._starting_from("recorded failed", ACTIVE)
        self._at_occurrence("recorded failed", record.occurrence)
        what = f"occurrence {record.occurrence} failed"
        policy = self.failure_policy
        if policy is FailurePolicy.STOP:
            status, reason = Status.FAILED, what
            overlap = NO_OVERLAP  # it stops at this fire (a retry by hand goes on from it)
        elif next_fire is None and held_by is not None:
            status, reason = Status.PAUSED, f"{what}; {_held(held_by)}"
        elif policy is FailurePolicy.PAUSE and next_fire is not None:
            status, reason = Status.PAUSED, f"{what}; paused (onFailure PAUSE)"
        elif next_fire is None:
            status, reason = Status.COMPLETED, f"{what}; it was the last"
        else:
            status, reason = Status.PENDING, f"{what}; continuing (onFailure CONTINUE)"
        moved = replace(
            self._moved(now, status, reason, limits.transitions),
            history=_with(self.history, record, overlap, limits),
            last_error=record.error,
            retry_count=max(record.attempts - 1, self.retry_count),
            claimed_by=None,
            claimed_at=None,
            buffered=False,
        )
        if policy is FailurePolicy.STOP:
            return replace(moved, ttl=limits.expiry(now))
        failed_fire = FailedFire(
            record.occurrence, record.scheduled_time, self.key_of(record.occurrence), record.error
        )
        moved = replace(moved, unresolved=(*self.unresolved, failed_fire)[-MAX_UNRESOLVED:])
        if status is Status.COMPLETED:
            return replace(moved, ttl=limits.expiry(now))
        if next_fire is None:
            assert held_by is not None
            return moved._held_after(now, held_by, overlap)
        moved = moved._next_occurrence(next_fire, overlap)
        if status is Status.PAUSED:
            note = f"{what}: {record.error or 'see history'}"[:500]
            return replace(moved, generation=self.generation + 1, pause=Pause(now, note))
        return moved

    def _held_after(self, now: datetime, calendar: str, overlap: Overlap = NO_OVERLAP) -> Self:
        """Paused on ``calendar`` past the fire just recorded (a new generation): a resume goes
        on from the first fire after it that the calendar allows."""
        assert self.execution_time is not None
        # its time: the fire that passed (past the occurrences its overlap policy skipped)
        passed = self._next_occurrence(self.execution_time, replace(overlap, buffered=False))
        return replace(
            passed,
            generation=self.generation + 1,
            pause=Pause(now, _held(calendar), held_by=calendar),
            launch_at=None,
        )

    def _next_occurrence(self, next_fire: datetime, overlap: Overlap = NO_OVERLAP) -> Self:
        """On to the next occurrence — past those the overlap policy skipped — its fire time,
        no execution yet. (The changes of the occurrences before it stay, under the seal, until
        the next change is sealed.)"""
        return replace(
            self,
            execution_time=next_fire,
            occurrence=self.occurrence + 1 + overlap.passed,
            execution_arn=None,
            claimed_at=None,
            buffered=overlap.buffered,
        )

    def noted_failure(self, now: datetime, error: str, retry_count: int) -> Self:
        """An attempt failed and will be retried (or reported): keep its error on the record."""
        self._starting_from("noted failing", Status.IN_PROGRESS)
        return replace(self._touched(now), last_error=error[:1000], retry_count=retry_count)

    def noted_missed(self, now: datetime) -> Self:
        """The watchdog's note: the fire the record is at is missed (a need of attention)."""
        self._starting_from("noted missed", Status.PENDING)
        assert self.execution_time is not None
        note = MissedFire(self.generation, self.occurrence, self.execution_time, now)
        return replace(self._touched(now), missed=note)

    def noting_tampered_calendar(self, name: str, now: datetime) -> Self:
        """A fire found the calendar ``name`` changed outside tickwork: noted (once)."""
        noted = self.tampered_calendar
        if noted is not None and noted.name == name:
            return self
        return replace(self, tampered_calendar=TamperedCalendar(name, now))

    def trusting_calendar(self) -> Self:
        """A fire read its calendar under its seal (or the schedule names none): no note."""
        return self if self.tampered_calendar is None else replace(self, tampered_calendar=None)

    def with_execution(self, now: datetime, execution_arn: str) -> Self:
        """Its fire's execution named (a leg, a repair, a hand-over before the claim): no
        longer parked (a fire parked far was launched without a name)."""
        self._starting_from("given an execution", ACTIVE)
        return replace(self._touched(now), execution_arn=execution_arn, launch_at=None)

    def launched(self, now: datetime, execution_arn: str) -> Self:
        """The pump started the parked fire's execution."""
        if not self.is_parked:
            raise TransitionRefused(self.id, "launched", f"its fire is not parked ({self.status})")
        return replace(self._touched(now), execution_arn=execution_arn, launch_at=None)

    def parked_again(self, now: datetime, launch_at: datetime) -> Self:
        """Its execution could not be started (a quota, throttling): the pump tries again."""
        self._starting_from("parked again", Status.PENDING)
        return replace(self._touched(now), execution_arn=None, launch_at=launch_at, far_park=False)

    def planned(self, execution_arn: str) -> Self:
        """The execution this version's fire will run in (named before it is started)."""
        return replace(self, execution_arn=execution_arn, launch_at=None)

    def parked(self, launch_at: datetime, now: datetime) -> Self:
        """This version's fire waits in the table; the pump starts its execution at
        ``launch_at``. Written ``now`` (its ``updated_at``: how far ahead it was parked decides
        how the pump finds it, record_keys)."""
        far = to_epoch_ms(launch_at) - to_epoch_ms(now) > PARK_INDEX_MS
        return replace(self, execution_arn=None, launch_at=launch_at, updated_at=now, far_park=far)

    def manual_claimed(self, now: datetime, number: int, execution_arn: str | None) -> Self:
        """Claimed by an execution, by its ARN (None: released, its execution lost)."""
        self._manual_in_flight("claimed", number)
        return replace(self._touched(now), manual=self.manual.claimed(number, execution_arn))

    def manual_noted_failure(self, now: datetime, number: int, retries: int) -> Self:
        """A manual fire's attempt failed and will be retried (or reported): its count kept."""
        self._manual_in_flight("noted failing", number)
        return replace(self._touched(now), manual=self.manual.noted(number, retries))

    def manual_recorded(
        self, now: datetime, number: int, record: Occurrence, key: str, limits: Limits
    ) -> Self:
        """A manual fire's tick or failure: into the history, out of the fires in flight; a
        fire that succeeded resolves the failure it retried, one that failed needs attention."""
        self._manual_in_flight("recorded", number)
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

    def _manual_in_flight(self, transition: str, number: int) -> None:
        if self.manual.fire(number) is None:
            raise TransitionRefused(
                self.id, f"{transition} as manual fire {number}", "no such fire is in flight"
            )
