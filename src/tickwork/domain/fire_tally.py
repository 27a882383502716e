"""How a recorded occurrence counts in the fire totals (``/stats``, the dashboard's chart)."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

from tickwork.domain.action import Occurrence
from tickwork.domain.fire import Outcome, Trigger
from tickwork.domain.times import ceil_second

__all__ = ["LATE_AFTER", "FireKind", "fire_kind"]

LATE_AFTER = timedelta(seconds=1)


class FireKind(StrEnum):
    ON_TIME = "onTime"
    LATE = "late"
    FAILED = "failed"


def fire_kind(occurrence: Occurrence) -> FireKind | None:
    """On time (fired at most 1 s after the whole second at or after its time: a lone fire's
    execution wakes on that second, ``FirePrecision`` second), late, or failed after its
    retries; None for an occurrence that ran nothing (NO_ACTION, SKIPPED)."""
    if occurrence.outcome is Outcome.FAILED:
        return FireKind.FAILED
    if occurrence.outcome is not Outcome.FIRED:
        return None
    if occurrence.trigger is not Trigger.SCHEDULED:  # asked for by hand: never late
        return FireKind.ON_TIME
    late = occurrence.actual_time - ceil_second(occurrence.scheduled_time) > LATE_AFTER
    return FireKind.LATE if late else FireKind.ON_TIME
