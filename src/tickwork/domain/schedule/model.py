"""The Schedule value: when an action fires, stored beside it as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule.calendar import CalendarUse, Excluded
from tickwork.domain.schedule.describe import describe_schedule
from tickwork.domain.schedule.kinds import OnceTrigger, check_shape, trigger_for
from tickwork.domain.schedule.shape import ScheduleKind
from tickwork.domain.schedule.stored import fields_from_stored, to_stored
from tickwork.domain.schedule.trigger import Trigger
from tickwork.domain.schedule.wallclock import DEFAULT_DST, DstPolicy
from tickwork.domain.schedule.window import FireWindow, at_or_before
from tickwork.domain.times import require_utc

__all__ = ["Schedule"]

_MICROSECOND = timedelta(microseconds=1)
_MAX_PASSED = 1_000  # runs of excluded occurrences passed over in a row
_CALENDAR_REACH = timedelta(days=1_100)  # how far a shifted fire may lie from its occurrence
_INSTANT_FIELDS = (("anchor", "anchor"), ("start", "startTime"), ("end", "endTime"))


@dataclass(frozen=True)
class Schedule:
    """When an action fires. Every datetime in and out is aware UTC; "now" is passed in.

    ``expression`` holds the cron text, the rate text or the frequency preset;
    ``anchor`` the one-off instant, the rate's creation time or the frequency's first time.
    ``start``/``end`` bound the fires (inclusive); ``max_occurrences`` counts all fires.
    """

    kind: ScheduleKind
    expression: str | None = None
    anchor: datetime | None = None
    timezone: str = "UTC"
    start: datetime | None = None
    end: datetime | None = None
    max_occurrences: int | None = None
    dst: DstPolicy = DEFAULT_DST  # local times that repeat or go missing across DST
    window: FireWindow | None = None  # each fire at its own instant by its scheduled time
    calendar: CalendarUse | None = None  # dates and hours its fires skip or shift past
    _trigger: Trigger = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            kind = ScheduleKind(self.kind)
        except ValueError as error:
            raise ValidationFailed.of(
                "kind",
                f"{self.kind!r} is not a schedule kind",
                f"use one of {', '.join(ScheduleKind)}",
            ) from error
        object.__setattr__(self, "kind", kind)
        for name, detail_field in _INSTANT_FIELDS:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, require_utc(value, detail_field))
        check_shape(self)
        trigger, expression = trigger_for(self)
        object.__setattr__(self, "_trigger", trigger)
        object.__setattr__(self, "expression", expression)

    @classmethod
    def one_off(cls, at: datetime) -> Schedule:
        return cls(ScheduleKind.ONCE, anchor=at)

    @classmethod
    def of_cron(cls, expression: str, timezone: str = "UTC", **bounds: Any) -> Schedule:
        return cls(ScheduleKind.CRON, expression, timezone=timezone, **bounds)

    @classmethod
    def of_rate(cls, expression: str, anchor: datetime, **bounds: Any) -> Schedule:
        return cls(ScheduleKind.RATE, expression, anchor, **bounds)

    @classmethod
    def of_frequency(
        cls, preset: str, anchor: datetime, timezone: str = "UTC", **bounds: Any
    ) -> Schedule:
        return cls(ScheduleKind.FREQUENCY, preset, anchor, timezone, **bounds)

    @classmethod
    def from_dict(cls, stored: dict[str, Any]) -> Schedule:
        return cls(**fields_from_stored(stored))

    def to_dict(self) -> dict[str, Any]:
        return to_stored(self)

    @property
    def frequency(self) -> str | None:
        """The preset name of a frequency schedule (the seed schema's field), else None."""
        return self.expression if self.kind is ScheduleKind.FREQUENCY else None

    def upcoming(self, now: datetime, count: int) -> list[datetime]:
        """The first ``count`` fires from ``now`` (fewer when the schedule ends)."""
        fires: list[datetime] = []
        fire = self.first_fire_time(now)
        while fire is not None and len(fires) < count:
            fires.append(fire)
            fire = self.next_fire_time(fire, len(fires))
        return fires

    def describe(self) -> str:
        return describe_schedule(self)

    def first_fire_time(self, now: datetime) -> datetime | None:
        """The first fire at or after ``now``; a one-off that is due fires at ``now``."""
        now = require_utc(now, "now")
        if isinstance(self._trigger, OnceTrigger):
            return max(self._trigger.at, now)
        return self._occurring(max(now, self.start or now))

    def next_fire_time(
        self, previous: datetime, fired: int, not_before: datetime | None = None
    ) -> datetime | None:
        """The next fire strictly after ``previous`` once ``fired`` fires have happened.

        ``not_before`` skips the fires before it (catch-up after an outage); skipped fires
        do not count toward ``max_occurrences``.
        """
        previous = require_utc(previous, "previous")
        if self.kind is ScheduleKind.ONCE:
            return None
        if self.max_occurrences is not None and fired >= self.max_occurrences:
            return None
        after = previous + _MICROSECOND
        if not_before is not None:
            after = max(after, require_utc(not_before, "not_before"))
        return self._occurring(max(after, self.start or after))

    # --- the calendar -----------------------------------------------------------------------
    def _occurring(self, moment: datetime) -> datetime | None:
        """The first occurrence at or after ``moment``: the trigger's first one its calendar
        lets fire (at its time, or shifted), within ``_CALENDAR_REACH`` of ``moment`` (the
        search bound: None past it). A run of excluded occurrences is passed in one step:
        everything from one of them to the calendar's next allowed moment is excluded, so SKIP
        goes on from that moment, and SHIFT's fire is the last of them (the others are each
        passed by the next), unless an occurrence falls on that very moment."""
        found = self._bounded(self._trigger.at_or_after(moment))
        for _ in range(_MAX_PASSED):
            use = self.calendar
            if found is None or use is None or use.calendar is None:
                return found
            if not use.calendar.excludes(found):
                return found
            allowed = use.calendar.next_allowed(found)
            if allowed is None or allowed - moment > _CALENDAR_REACH:
                return None  # none within the search bound
            if self.end is not None and allowed > self.end:
                return None  # (no fire after endTime, shifted or not)
            at_allowed = self._trigger.at_or_after(allowed)
            if use.policy is Excluded.SHIFT and at_allowed != allowed:
                last = at_or_before(self._trigger, allowed - _MICROSECOND, allowed - found)
                return self._bounded(last or found)
            found = self._bounded(at_allowed)
        return None

    def _calendar_fire(self, scheduled: datetime) -> datetime | None:
        """When the trigger's occurrence at ``scheduled`` fires under the calendar: at its
        time if allowed; shifted to the calendar's next allowed moment (SHIFT) unless another
        occurrence of the trigger comes by then; else (SKIP, or passed by) not at all."""
        use = self.calendar
        if use is None or use.calendar is None or not use.calendar.excludes(scheduled):
            return scheduled
        if use.policy is Excluded.SKIP:
            return None
        target = use.calendar.next_allowed(scheduled)
        if target is None or (self.end is not None and target > self.end):
            return None
        following = self._trigger.at_or_after(scheduled + _MICROSECOND)
        return None if following is not None and following <= target else target

    # --- the flexible window ------------------------------------------------------------------
    def fire_time(self, scheduled: datetime, seed: str) -> datetime:
        """When the occurrence scheduled at ``scheduled`` fires: at its time, or shifted past
        its calendar's exclusions; then, with a window, at the instant ``seed`` (the action's
        id) and its scheduled time fix in the window that opens there, on a moment its
        calendar allows. Whether it fires at all is its calendar's word on its scheduled time
        (``_occurring``), whatever the seed."""
        opening = scheduled
        excluded = None
        if self.calendar is not None:
            opening = self._calendar_fire(scheduled) or scheduled
            excluded = self.calendar.calendar.excludes if self.calendar.calendar else None
        if self.window is None:
            return opening
        alone = self.kind is ScheduleKind.ONCE
        return self.window.fire_time(
            self._trigger, scheduled, seed, alone=alone, start=opening, excluded=excluded
        )

    def origin(self, fire: datetime, seed: str) -> datetime:
        """The scheduled time of the occurrence that fires at ``fire`` (``fire`` itself when
        no window or calendar moved it, or no occurrence fires then: a manual fire)."""
        if self.calendar is not None:  # a shifted or windowed fire: the occurrence last before
            latest = at_or_before(self._trigger, fire, _CALENDAR_REACH)
            if latest is None or latest == fire or self.fire_time(latest, seed) != fire:
                return fire
            return latest
        if self.window is None or self.kind is ScheduleKind.ONCE:
            return fire
        return self.window.origin(self._trigger, fire, seed) or fire

    @property
    def fire_reach(self) -> timedelta:
        """How long after its scheduled time an occurrence may fire: its flexible window, or
        the reach of a shift past its calendar's exclusions; nothing without either."""
        if self.calendar is not None and self.calendar.policy is Excluded.SHIFT:
            return _CALENDAR_REACH
        if self.window is not None and self.kind is not ScheduleKind.ONCE:
            return self.window.reach
        return timedelta(0)

    @property
    def fire_lead(self) -> timedelta:
        """How far before its scheduled time an occurrence may fire: half a window around it
        (windowMode AROUND); nothing otherwise."""
        if self.window is not None and self.kind is not ScheduleKind.ONCE:
            return self.window.lead
        return timedelta(0)

    def last_before(self, moment: datetime) -> datetime | None:
        """The last occurrence strictly before ``moment`` whose fire may still be at or after
        it (within ``fire_reach``): the only one that can be, since a window ends at the next
        occurrence and a shift is passed by it."""
        reach = self.fire_reach
        if not reach:
            return None
        last = at_or_before(self._trigger, moment - _MICROSECOND, reach)
        if last is None or (self.start is not None and last < self.start):
            return None
        return self._bounded(last)

    def first_fire(self, now: datetime, seed: str) -> tuple[datetime, datetime] | None:
        """The first occurrence at or after ``now``: its scheduled time and its fire time (in
        its flexible window, or shifted past its calendar's exclusions)."""
        scheduled = self.first_fire_time(now)
        if scheduled is None:
            return None
        fire = self.fire_time(scheduled, seed)
        if fire < now and self.fire_lead:  # a window around it opened, and its instant passed
            later = self.next_fire_time(scheduled, 0)
            if later is not None:
                return later, max(self.fire_time(later, seed), now)
        return scheduled, max(fire, now)

    def _bounded(self, fire: datetime | None) -> datetime | None:
        if fire is None or (self.end is not None and fire > self.end):
            return None
        return fire
