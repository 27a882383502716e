"""An action's coming occurrences as they will happen: from the one its record is at, each with
its number, its scheduled time, when it fires (None: skipped) and the change asked of it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tickwork.domain.action.record import ActionRecord
from tickwork.domain.occurrence_changes import OccurrenceChange
from tickwork.domain.times import ceil_ms

__all__ = ["Upcoming", "upcoming"]


@dataclass(frozen=True)
class Upcoming:
    """One coming occurrence as it will happen: ``fires_at`` None when skipped."""

    number: int
    scheduled: datetime
    fires_at: datetime | None
    change: OccurrenceChange | None = None


def upcoming(action: ActionRecord, count: int) -> list[Upcoming]:
    """The action's next ``count`` occurrences from the one its record is at, with their skips
    and moves (fewer when the schedule ends; none for a finished action)."""
    if action.execution_time is None or not action.repeat:
        at = action.execution_time
        return [] if at is None else [Upcoming(action.occurrence, at, at)]
    number, moment = action.occurrence, action.origin_of(action.execution_time)
    found: list[Upcoming] = []
    while len(found) < count:
        change = action.change_of(moment)
        fires_at = None if change is not None and change.to is None else action.fire_time_of(moment)
        found.append(Upcoming(number, moment, fires_at, change))
        following = action.schedule.next_fire_time(moment, number)
        if following is None:
            break
        number, moment = number + 1, ceil_ms(following)
    return found
