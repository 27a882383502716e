"""Short human text for a schedule: "every day at 09:00 Asia/Kuala_Lumpur"."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from tickwork.domain.schedule.shape import ScheduleFields
from tickwork.domain.times import iso_exact

__all__ = ["describe_schedule"]

_ELAPSED = {"TEN_MINS": "every 10 minutes", "HOURLY": "every hour"}


def describe_schedule(schedule: ScheduleFields) -> str:
    return _when(schedule) + _bounds(schedule)


def _when(schedule: ScheduleFields) -> str:
    kind, expression, zone = str(schedule.kind), schedule.expression or "", schedule.timezone
    anchor = schedule.anchor
    if kind == "cron":
        return (
            f"{expression} {zone}"
            if expression.startswith("cron(")
            else f"cron {expression} {zone}"
        )
    if anchor is None:
        return kind
    if kind == "once":
        return f"once at {iso_exact(anchor)}"
    if kind == "rate":
        return f"{expression} from {iso_exact(anchor)}"
    if expression in _ELAPSED:
        return f"{_ELAPSED[expression]} from {iso_exact(anchor)}"
    wall = anchor.astimezone(ZoneInfo(zone))
    at = f"at {_clock(wall)} {zone}"
    if expression == "DAILY":
        return f"every day {at}"
    if expression == "WEEKLY":
        return f"every {wall:%A} {at}"
    return f"every month on day {wall.day} (or the month's last day) {at}"


def _bounds(schedule: ScheduleFields) -> str:
    parts = []
    if schedule.max_occurrences is not None:
        parts.append(f"{schedule.max_occurrences} times")
    if schedule.start is not None:
        parts.append(f"from {iso_exact(schedule.start)}")
    if schedule.end is not None:
        parts.append(f"until {iso_exact(schedule.end)}")
    if schedule.window is not None:
        where = "around" if schedule.window.around else "after"
        parts.append(f"each in a {_span(schedule.window.size)} window {where} its time")
    if schedule.calendar is not None:
        policy = "skipped" if schedule.calendar.policy == "SKIP" else "shifted"
        parts.append(f"calendar {schedule.calendar.name} (times it excludes {policy})")
    return "".join(f", {part}" for part in parts)


def _span(size: timedelta) -> str:
    seconds = size.total_seconds()
    for unit, length in (("h", 3600), ("m", 60)):
        if seconds >= length and seconds % length == 0:
            return f"{int(seconds // length)}{unit}"
    return f"{seconds:g}s"


def _clock(wall: datetime) -> str:
    return f"{wall:%H:%M}" if not (wall.second or wall.microsecond) else f"{wall:%H:%M:%S}"
