"""Frequency presets: TEN_MINS and HOURLY in elapsed time; DAILY, WEEKLY, MONTHLY on the wall."""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule.calendar_period import CalendarTrigger
from tickwork.domain.schedule.interval import IntervalTrigger
from tickwork.domain.schedule.wallclock import DEFAULT_DST, DstPolicy

__all__ = ["Frequency", "frequency_trigger", "parse_frequency"]


class Frequency(StrEnum):
    TEN_MINS = "TEN_MINS"
    HOURLY = "HOURLY"
    DAILY = "DAILY"
    WEEKLY = "WEEKLY"
    MONTHLY = "MONTHLY"


_ELAPSED = {Frequency.TEN_MINS: timedelta(minutes=10), Frequency.HOURLY: timedelta(hours=1)}
_DAYS = {Frequency.DAILY: 1, Frequency.WEEKLY: 7}


def parse_frequency(text: str, field: str = "frequency") -> Frequency:
    """The preset named ``text`` (case-insensitive)."""
    try:
        return Frequency(text.strip().upper())
    except (AttributeError, ValueError) as error:
        raise ValidationFailed.of(
            field,
            f"{text!r} is not a frequency",
            f"use one of {', '.join(Frequency)}, or cron/rate for other patterns",
        ) from error


def frequency_trigger(
    preset: Frequency, anchor: datetime, zone: ZoneInfo, dst: DstPolicy = DEFAULT_DST
) -> IntervalTrigger | CalendarTrigger:
    """The trigger whose fire k (k >= 0) is ``anchor`` plus k periods of ``preset``."""
    if preset in _ELAPSED:
        return IntervalTrigger(anchor, _ELAPSED[preset], first=0)
    if preset in _DAYS:
        return CalendarTrigger(anchor, zone, days=_DAYS[preset], dst=dst)
    return CalendarTrigger(anchor, zone, months=1, dst=dst)
