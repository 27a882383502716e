"""Fixed elapsed intervals: fire k is ``anchor + k * interval``, computed from the anchor."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = ["IntervalTrigger"]

_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class IntervalTrigger:
    """Fires at ``anchor + k * interval`` for ``k >= first``.

    ``first`` is 1 for a rate (the creation time is not a fire) and 0 for a frequency
    preset (the anchor is the first fire). Elapsed time, so DST never moves a fire.
    """

    anchor: datetime
    interval: timedelta
    first: int = 0

    def nth(self, k: int) -> datetime:
        return self.anchor + k * self.interval

    def at_or_after(self, moment: datetime) -> datetime | None:
        elapsed = (moment - self.anchor) // _MICROSECOND
        step = self.interval // _MICROSECOND
        k = max(self.first, -(-elapsed // step))
        try:
            return self.nth(k)
        except OverflowError:
            return None
