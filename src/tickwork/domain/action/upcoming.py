"""An action's coming occurrences as they will happen: from the one its record is at, each with
its number, its scheduled time, when it fires (None: skipped) and the change asked of it; and
its first fire after a moment (a resume's, a calendar's change)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from tickwork.domain.action.record import ActionRecord
from tickwork.domain.occurrence_changes import OccurrenceChange
from tickwork.domain.times import ceil_ms

__all__ = ["Upcoming", "next_fire_after", "upcoming"]


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


def next_fire_after(
    action: ActionRecord, now: datetime, passed: datetime | None
) -> datetime | None:
    """The fire time of the first occurrence after the one that passed (``passed``, its fire
    time) that fires after ``now``: a moved one at its moved time, one in a flexible window at
    its instant, one its calendar shifts at its shifted time — an occurrence scheduled before
    ``now`` may still be due."""
    since = action.earliest_firing(now) - timedelta(microseconds=1)  # it, or after it
    # An occurrence scheduled before that, moved to a time after now, is not met by the walk.
    moved = None
    if passed is not None:
        origin = action.origin_of(passed)
        moved = action.moved_fire(origin, since, now + timedelta(microseconds=1))
        since = max(since, origin)
    fired = action.occurrence - 1
    scheduled = action.schedule.next_fire_time(since, fired)
    while scheduled is not None:
        fire = action.fire_time_of(ceil_ms(scheduled))
        if fire > now:
            return fire if moved is None else min(fire, moved)
        scheduled = action.schedule.next_fire_time(scheduled, fired)
    return moved
