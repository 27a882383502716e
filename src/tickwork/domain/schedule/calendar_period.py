"""Wall-clock periods: the same local time every day, week or calendar month."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from tickwork.domain.schedule.wallclock import DEFAULT_DST, DstPolicy, utc_to_local

__all__ = ["CalendarTrigger", "add_months"]

# Enough periods to step over any run of DST-skipped local times many times over.
_MAX_STEPS = 1000


def add_months(wall: datetime, months: int) -> datetime:
    """``wall`` moved by whole calendar months, clamped to the target month's last day."""
    years, month_index = divmod(wall.month - 1 + months, 12)
    year, month = wall.year + years, month_index + 1
    day = min(wall.day, calendar.monthrange(year, month)[1])
    return wall.replace(year=year, month=month, day=day)


@dataclass(frozen=True)
class CalendarTrigger:
    """Fire k (k >= 0) is the anchor's local wall time moved by k periods in ``zone``.

    Every fire is computed from the anchor, never chained from the previous one, so a
    monthly schedule anchored on Jan 31 fires Feb 28 (29), Mar 31, Apr 30. Local times
    that do not exist or repeat follow ``dst`` (by default: skipped; the first occurrence).
    """

    anchor: datetime
    zone: ZoneInfo
    days: int = 0
    months: int = 0
    dst: DstPolicy = DEFAULT_DST

    def nth(self, k: int) -> tuple[datetime, ...]:
        """The instants of fire k: none when its local time is skipped, two when a repeated
        one fires BOTH times."""
        if k == 0:
            return (self.anchor,)
        wall = utc_to_local(self.anchor, self.zone)
        try:
            if self.months:
                moved = add_months(wall, k * self.months)
            else:
                moved = wall + timedelta(days=k * self.days)
        except (OverflowError, ValueError):
            return ()
        return self.dst.instants(moved, self.zone)

    def at_or_after(self, moment: datetime) -> datetime | None:
        k = self._periods_before(moment)
        for _ in range(_MAX_STEPS):
            for fire in self.nth(k):
                if fire >= moment:
                    return fire
            k += 1
        return None

    def _periods_before(self, moment: datetime) -> int:
        """A k whose fire is surely before ``moment`` (two periods of slack for DST)."""
        if moment <= self.anchor:
            return 0
        start, end = utc_to_local(self.anchor, self.zone), utc_to_local(moment, self.zone)
        if self.months:
            span = ((end.year - start.year) * 12 + end.month - start.month) // self.months
        else:
            span = (end.date() - start.date()).days // self.days
        return max(0, span - 2)
