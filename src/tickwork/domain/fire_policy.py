"""An action's own fire policy, in EventBridge Scheduler's terms: how long before a fire its
schedule is fixed (``lockSeconds``), how often and how long a failed fire is tried again
(``maximumRetryAttempts``, ``maximumEventAgeSeconds``: a schedule's ``RetryPolicy``) and where a
fire that failed for good is sent (``deadLetterArn``: its ``DeadLetterConfig``), and what a resume
does with the occurrences that came due while it was paused (``catchUpOnResume``), and what
happens to an occurrence that comes due while the previous fire is still being attempted
(``overlapPolicy``, in Temporal's terms).

Each is None at the stack's default (``LockSeconds``, ``RetryMaxAttempts``, a day), so a record
that sets none stores none. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Self

__all__ = [
    "DEFAULT_EVENT_AGE",
    "MAX_CATCH_UP_ON_RESUME",
    "MAX_EVENT_AGE",
    "MAX_LOCK",
    "MAX_RETRY_ATTEMPTS",
    "MIN_EVENT_AGE",
    "NO_POLICY",
    "FirePolicy",
    "OverlapPolicy",
    "ResumeCatchUp",
    "RetryBudget",
]

MAX_RETRY_ATTEMPTS = 185  # EventBridge Scheduler's bound
MIN_EVENT_AGE = 60
MAX_EVENT_AGE = 86_400
DEFAULT_EVENT_AGE = 86_400  # EventBridge Scheduler's default
MAX_LOCK = 3_600
MAX_CATCH_UP_ON_RESUME = 100  # occurrences a resume runs at most (ALL): the latest ones


class ResumeCatchUp(StrEnum):
    """The occurrences that came due while an action was paused, on its resume: SKIP them (the
    default, as before), run the LAST of them once, or run ALL of them (the latest 100), each a
    fire of its own (trigger CATCH_UP) with its own idempotency key and scheduled time."""

    SKIP = "SKIP"
    LAST = "LAST"
    ALL = "ALL"


class OverlapPolicy(StrEnum):
    """An occurrence that comes due while the previous fire is still being attempted (between
    its first attempt and its ending), in Temporal's words: SKIP it (the default, as before:
    nothing runs beside a fire; the fires go on at the first occurrence after it ends),
    BUFFER_ONE (the first such occurrence runs as soon as the fire ends, the others are
    skipped), BUFFER_ALL (each runs, one after another, as soon as the one before ends) or
    ALLOW_ALL (each runs at its own time, beside the fire still being retried). A skipped one
    is recorded SKIPPED with the reason and announced (Schedule Skipped)."""

    SKIP = "SKIP"
    BUFFER_ONE = "BUFFER_ONE"
    BUFFER_ALL = "BUFFER_ALL"
    ALLOW_ALL = "ALLOW_ALL"


_WIRE = {
    "lock_seconds": "lockSeconds",
    "maximum_retry_attempts": "maximumRetryAttempts",
    "maximum_event_age_seconds": "maximumEventAgeSeconds",
    "dead_letter_arn": "deadLetterArn",
    "catch_up_on_resume": "catchUpOnResume",
    "overlap_policy": "overlapPolicy",
}


@dataclass(frozen=True)
class FirePolicy:
    lock_seconds: int | None = None
    maximum_retry_attempts: int | None = None
    maximum_event_age_seconds: int | None = None
    dead_letter_arn: str | None = None
    catch_up_on_resume: ResumeCatchUp | None = None
    overlap_policy: OverlapPolicy | None = None

    @property
    def resume_catch_up(self) -> ResumeCatchUp:
        return self.catch_up_on_resume or ResumeCatchUp.SKIP

    @property
    def overlap(self) -> OverlapPolicy:
        return self.overlap_policy or OverlapPolicy.SKIP

    @property
    def is_default(self) -> bool:
        return all(getattr(self, spec.name) is None for spec in fields(self))

    def lock(self, default: timedelta) -> timedelta:
        """How long before a fire its schedule is fixed (``LockSeconds`` unless set)."""
        return default if self.lock_seconds is None else timedelta(seconds=self.lock_seconds)

    def retries(self, default: int) -> int:
        """How many times a fire that failed transiently is attempted again."""
        return default if self.maximum_retry_attempts is None else self.maximum_retry_attempts

    @property
    def event_age(self) -> timedelta:
        """How long after its fire time a failed fire may still be attempted again."""
        seconds = self.maximum_event_age_seconds
        return timedelta(seconds=DEFAULT_EVENT_AGE if seconds is None else seconds)

    def budget(self, fire_at: datetime, default_retries: int) -> RetryBudget:
        return RetryBudget(1 + self.retries(default_retries), fire_at + self.event_age)

    def to_dict(self) -> dict[str, Any]:
        """Its set fields, as the wire and the record name them."""
        return {
            wire: str(value) if isinstance(value, StrEnum) else value
            for name, wire in _WIRE.items()
            if (value := getattr(self, name)) is not None
        }

    @classmethod
    def from_dict(cls, stored: dict[str, Any] | None) -> Self:
        if not stored:
            return cls()

        def number(wire: str) -> int | None:
            value = stored.get(wire)
            return None if value is None else int(value)

        return cls(
            lock_seconds=number("lockSeconds"),
            maximum_retry_attempts=number("maximumRetryAttempts"),
            maximum_event_age_seconds=number("maximumEventAgeSeconds"),
            dead_letter_arn=stored.get("deadLetterArn"),
            catch_up_on_resume=(
                ResumeCatchUp(stored["catchUpOnResume"]) if stored.get("catchUpOnResume") else None
            ),
            overlap_policy=(
                OverlapPolicy(stored["overlapPolicy"]) if stored.get("overlapPolicy") else None
            ),
        )


NO_POLICY = FirePolicy()  # the stack's defaults throughout


@dataclass(frozen=True)
class RetryBudget:
    """What a fire's retry policy allows it: ``attempts`` in all, none started after
    ``deadline``."""

    attempts: int
    deadline: datetime

    def spent(self, made: int, now: datetime) -> str | None:
        """Why no attempt after the ``made`` ones is allowed at ``now`` (None: one is)."""
        if made >= self.attempts:
            return f"{made} attempts made, the retry policy's {self.attempts}"
        if now >= self.deadline:
            return f"past the retry policy's deadline {self.deadline.isoformat()}"
        return None
