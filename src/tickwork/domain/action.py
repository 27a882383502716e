"""The action record: what is scheduled, where its chain of fires stands, and what happened.

Pure: every transition takes ``now`` and returns a new ``Action``; nothing here reads a clock
or talks to AWS. The repository adapter persists it; the use cases decide which transition.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from tickwork.domain.catch_up import DEFAULT_CATCH_UP, CatchUp
from tickwork.domain.fire import FireKey, Outcome
from tickwork.domain.schedule import Schedule
from tickwork.domain.times import ceil_ms

if TYPE_CHECKING:
    from tickwork.domain.start_request import StartRequest

__all__ = ["ACTIVE", "FINISHED", "Action", "Limits", "Occurrence", "Status", "Transition"]


class Status(StrEnum):
    PENDING = "PENDING"
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    NO_ACTION = "NO_ACTION"
    CANCELLED = "CANCELLED"


ACTIVE = frozenset({Status.PENDING, Status.IN_PROGRESS})
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
    generation: int  # bumped when what runs changes: replace, cancel, manual retry
    version: int  # bumped on every write (optimistic concurrency)
    created_at: datetime
    updated_at: datetime
    spec_hash: str
    start_event_id: str | None = None
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
        schedule from occurrence 1, keeping the record's creation time and history."""
        transition = Transition(
            now,
            replacing.status if replacing else None,
            Status.PENDING,
            "replaced" if replacing else "created",
        )
        return cls(
            id=action_id,
            action=request.action,
            data=request.data,
            metadata=request.metadata,
            schedule=request.schedule,
            catch_up=request.catch_up,
            status=Status.PENDING,
            execution_time=ceil_ms(first_fire),
            occurrence=1,
            generation=replacing.generation + 1 if replacing else 1,
            version=replacing.version + 1 if replacing else 1,
            created_at=replacing.created_at if replacing else now,
            updated_at=now,
            spec_hash=spec_hash,
            start_event_id=event_id,
            request=request.detail,
            history=replacing.history if replacing else (),
            transitions=(*(replacing.transitions if replacing else ()), transition)[
                -limits.transitions :
            ],
        )

    # --- derived, seed-schema compatible views -------------------------------------------
    @property
    def fire_key(self) -> FireKey:
        """The fire the record is at: (id, generation, occurrence)."""
        return (self.id, self.generation, self.occurrence)

    @property
    def repeat(self) -> bool:
        return self.schedule.kind != "once"

    @property
    def frequency(self) -> str | None:
        return self.schedule.frequency if self.schedule.kind == "frequency" else None

    @property
    def execution_remainder(self) -> int | None:
        """Fires left including the next one; None when unbounded by count."""
        if self.status not in ACTIVE:
            return 0
        if self.schedule.kind == "once":
            return 1
        if self.schedule.max_occurrences is None:
            return None
        return max(self.schedule.max_occurrences - self.occurrence + 1, 0)

    def is_locked(self, now: datetime, lock: timedelta) -> bool:
        """Inside the lock window an occurrence can no longer be updated or cancelled."""
        if self.status == Status.IN_PROGRESS:
            return True
        return (
            self.status == Status.PENDING
            and self.execution_time is not None
            and self.execution_time - now <= lock
        )

    # --- transitions ----------------------------------------------------------------------
    def _moved(
        self, now: datetime, status: Status, reason: str, limit: int, **changes: Any
    ) -> Action:
        transitions = self.transitions
        if status != self.status or reason:
            transitions = (*transitions, Transition(now, self.status, status, reason))[-limit:]
        return replace(
            self,
            status=status,
            version=self.version + 1,
            updated_at=now,
            transitions=transitions,
            **changes,
        )

    def claimed(self, now: datetime, execution_name: str, limit: int) -> Action:
        return self._moved(now, Status.IN_PROGRESS, "claimed", limit, claimed_by=execution_name)

    def released(self, now: datetime, limit: int) -> Action:
        """Give up a claim whose execution was lost: the fire runs again."""
        return self._moved(
            now, Status.PENDING, "claim released after an outage", limit, claimed_by=None
        )

    def fired(
        self,
        now: datetime,
        record: Occurrence,
        next_fire: datetime | None,
        result: dict[str, Any] | None,
        limits: Limits,
    ) -> Action:
        history = (*self.history, record)[-limits.history :]
        common = {
            "history": history,
            "last_result": result,
            "retry_count": record.attempts - 1,
            "claimed_by": None,
            "last_error": None,
        }
        if record.outcome is Outcome.NO_ACTION:
            return self._moved(
                now,
                Status.NO_ACTION,
                "no fulfillment for this action",
                limits.transitions,
                ttl=limits.expiry(now),
                **common,
            )
        done = "skipped" if record.outcome is Outcome.SKIPPED else "fired"
        if next_fire is None:
            return self._moved(
                now,
                Status.COMPLETED,
                f"occurrence {record.occurrence} {done}; it was the last",
                limits.transitions,
                ttl=limits.expiry(now),
                **common,
            )
        return self._moved(
            now,
            Status.PENDING,
            f"occurrence {record.occurrence} {done}",
            limits.transitions,
            execution_time=next_fire,
            occurrence=self.occurrence + 1,
            execution_arn=None,
            **common,
        )

    def failed(self, now: datetime, record: Occurrence, limits: Limits) -> Action:
        history = (*self.history, record)[-limits.history :]
        return self._moved(
            now,
            Status.FAILED,
            f"occurrence {record.occurrence} failed",
            limits.transitions,
            history=history,
            last_error=record.error,
            retry_count=max(record.attempts - 1, self.retry_count),
            claimed_by=None,
            ttl=limits.expiry(now),
        )

    def cancelled(self, now: datetime, limits: Limits) -> Action:
        return self._moved(
            now,
            Status.CANCELLED,
            "cancelled",
            limits.transitions,
            generation=self.generation + 1,
            ttl=limits.expiry(now),
        )

    def retried(self, now: datetime, limits: Limits) -> Action:
        return self._moved(
            now,
            Status.PENDING,
            "retried by hand",
            limits.transitions,
            generation=self.generation + 1,
            execution_time=now,
            ttl=None,
            retry_count=0,
            last_error=None,
            execution_arn=None,
        )

    def noted_failure(self, now: datetime, error: str, retry_count: int) -> Action:
        """An attempt failed and will be retried (or reported): keep its error on the record."""
        return replace(
            self,
            last_error=error[:1000],
            retry_count=retry_count,
            version=self.version + 1,
            updated_at=now,
        )

    def with_execution(self, now: datetime, execution_arn: str) -> Action:
        return replace(self, execution_arn=execution_arn, version=self.version + 1, updated_at=now)

    # --- before the first write of a version ---------------------------------------------------
    def planned(self, execution_arn: str) -> Action:
        """The execution this version's fire will run in (named before it is started)."""
        return replace(self, execution_arn=execution_arn)

    def sealed(self, seal: str | None) -> Action:
        return replace(self, seal=seal)


@dataclass(frozen=True)
class Limits:
    """Bounds on what a record keeps, and how long a finished one lives."""

    history: int = 20
    transitions: int = 50
    finished_ttl: timedelta = timedelta(days=30)

    def expiry(self, now: datetime) -> int:
        return int((now + self.finished_ttl).timestamp())
