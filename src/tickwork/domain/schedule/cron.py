"""Cron triggers evaluated on the wall clock of an IANA zone.

croniter only ever sees naive local wall times; the mapping to UTC (and the DST rules of the
schedule's ``DstPolicy``: by default a skipped local time does not fire and a repeated one
fires once, the first time) is done here with zoneinfo.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule.eventbridge_cron import (
    EVENTBRIDGE_EXAMPLE,
    is_eventbridge_cron,
    translate,
)
from tickwork.domain.schedule.wallclock import (
    DEFAULT_DST,
    DST_LOOKBACK,
    DstPolicy,
    utc_to_local,
)

__all__ = ["CronTrigger"]

_MICROSECOND = timedelta(microseconds=1)
# A fall-back hour of a minutely cron filters out 60 candidates; this is far above that.
_MAX_CANDIDATES = 10_000
_HELD = 256  # parsed expressions a thread keeps (past it, it starts over)
_FIX = f'write 5 fields such as "30 * * * *", or EventBridge {EVENTBRIDGE_EXAMPLE}'


@dataclass(frozen=True)
class CronTrigger:
    """A 5-field cron or an EventBridge ``cron(...)`` in ``zone``; refused if it cannot fire."""

    expression: str
    zone: ZoneInfo
    dst: DstPolicy = DEFAULT_DST
    standard: str = field(init=False)
    years: frozenset[int] | None = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.expression, str):
            raise ValidationFailed.of("cron", "must be a string", _FIX)
        if is_eventbridge_cron(self.expression):
            translated = translate(self.expression)
            standard, years = translated.standard, translated.years
        else:
            standard, years = self.expression.strip(), None
            if len(standard.split()) != 5:
                raise ValidationFailed.of(
                    "cron", f"{self.expression!r} does not have 5 fields", _FIX
                )
        from croniter import CroniterBadDateError, croniter  # at first use: a cold start skips it

        if not croniter.is_valid(standard):
            raise ValidationFailed.of("cron", f"{self.expression!r} is not a valid cron", _FIX)
        try:
            croniter(standard, datetime(2000, 1, 1)).get_next(datetime)
        except CroniterBadDateError as error:
            raise ValidationFailed.of(
                "cron", f"{self.expression!r} matches no date", _FIX
            ) from error
        object.__setattr__(self, "standard", standard)
        object.__setattr__(self, "years", years)

    def at_or_after(self, moment: datetime) -> datetime | None:
        """The first fire at or after ``moment`` (UTC), or None when there is none."""
        wall = utc_to_local(moment, self.zone) - _MICROSECOND
        if self.dst.looks_back:  # a repeated time's second occurrence may still be to come
            wall -= DST_LOOKBACK
        for _ in range(_MAX_CANDIDATES):
            candidate = self._next_wall(wall)
            if candidate is None:
                return None
            wall = candidate
            for fire in self.dst.instants(wall, self.zone):
                if fire >= moment:
                    return fire
        return None

    def _next_wall(self, after: datetime) -> datetime | None:
        """The next matching naive wall time after ``after`` in an allowed year."""
        from croniter import CroniterBadDateError

        while True:
            try:
                iterator = _iterator(self.standard)
                iterator.set_current(after, force=True)
                candidate: datetime = iterator.get_next(datetime)
            except (CroniterBadDateError, OverflowError, ValueError):
                return None
            if self.years is None or candidate.year in self.years:
                return candidate
            later = [year for year in self.years if year > candidate.year]
            if not later:
                return None
            after = datetime(min(later), 1, 1) - _MICROSECOND


_parsed = threading.local()  # per thread: an iterator is moved by each question asked of it


def _iterator(standard: str) -> Any:
    """A croniter over ``standard``, parsed once per thread and moved to each question's
    start: parsing is two thirds of the cost of a question."""
    from croniter import croniter

    held: dict[str, Any] = _parsed.__dict__.setdefault("iterators", {})
    iterator = held.get(standard)
    if iterator is None:
        if len(held) >= _HELD:
            held.clear()
        iterator = held[standard] = croniter(standard, datetime(2000, 1, 1))
    return iterator
