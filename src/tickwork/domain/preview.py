"""A preview of when a schedule fires, from one expression as a person types it.

``when_detail`` turns "30 * * * *", "rate(5 minutes)", "daily", "1h30m" or an ISO time
into the "when" of a Schedule Start detail; ``next_fire_times`` lists the fires the
schedule it names would have after a given instant, by the schedule's own rules
(``parse_start_detail`` and ``Schedule``); ``format_fire_times`` lays them out in UTC
and local time, the way the EventBridge console lists the next trigger dates.
Pure: "after" is passed in, no clock is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from tickwork.domain.durations import parse_duration
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule import Frequency
from tickwork.domain.schedule.calendar import Calendar
from tickwork.domain.schedule.wallclock import load_zone, next_transition
from tickwork.domain.start_request import parse_start_detail
from tickwork.domain.times import ceil_ms, iso_exact

__all__ = [
    "MAX_COUNT",
    "AroundChange",
    "around_dst_change",
    "detail_fire_times",
    "expression_detail",
    "format_fire_times",
    "next_fire_times",
    "when_detail",
]

MAX_COUNT = 100
_STRICTLY_AFTER = timedelta(microseconds=1)
_SECOND = timedelta(seconds=1)
_AROUND_REACH = timedelta(days=8)  # how far before a DST change its fires are looked for
_AROUND_MAX = 20_000  # fires stepped through at most (a minutely cron's 8 days is 11,520)
# Epoch milliseconds have 12 digits from 1973 on; fewer digits are not taken as a time.
_EPOCH_MS_DIGITS = 12
_NAMES = "JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|SUN|MON|TUE|WED|THU|FRI|SAT"
_CRON_FIELD = re.compile(rf"(?:[0-9*?/,#\-]|L|W|{_NAMES})+", re.IGNORECASE)
_FORMS = (
    'cron "30 * * * *" or "cron(0 9 ? * MON-FRI *)"; '
    'rate "rate(5 minutes)"; one-time "at(2030-11-20T13:00:00)"; '
    f'frequency "DAILY" (one of {", ".join(Frequency)}); '
    'duration "1h30m" or "PT5M"; '
    'ISO 8601 time "2026-05-01T09:00:00Z"; '
    "epoch milliseconds 1767254400000"
)


def when_detail(expression: str) -> dict[str, Any]:
    """The Start-detail "when" that ``expression`` names, found by its shape.

    Only the form is decided here; a cron or rate of the right shape but wrong content
    is refused by the schedule itself, naming "cron" or "rate".
    """
    text = expression.strip() if isinstance(expression, str) else ""
    lowered = text.lower()
    if lowered.startswith("cron("):
        return {"cron": text}
    if lowered.startswith("rate("):
        return {"rate": text}
    if lowered.startswith("at("):
        return {"at": text}
    if text.upper() in Frequency.__members__:
        return {"frequency": text.upper()}
    if text.isdigit() and len(text) >= _EPOCH_MS_DIGITS:
        return {"executionTime": int(text)}
    if _is_duration(text):
        return {"duration": text}
    if _is_iso_time(text):
        return {"at": text}
    fields = text.split()
    if len(fields) == 5 and all(_CRON_FIELD.fullmatch(field) for field in fields):
        return {"cron": " ".join(fields)}
    raise ValidationFailed.of(
        "expression", f"{expression!r} is not a schedule expression", f"give one of: {_FORMS}"
    )


def next_fire_times(
    expression: str,
    after: datetime,
    count: int = 5,
    timezone: str = "UTC",
    first: str | None = None,
    extra: dict[str, Any] | None = None,
) -> list[datetime]:
    """Up to ``count`` fires (aware UTC) of the schedule ``expression`` names, strictly after
    ``after`` (as for a new action created at ``after``), stopping early when the schedule
    ends. ``first`` (ISO 8601) is a frequency's first time; ``extra``: other Start fields
    (``dstRepeated``, ``dstMissing``). Whatever the Start detail refuses (a one-off in the
    past, a bad cron or zone) is refused here the same way.
    """
    return detail_fire_times(expression_detail(expression, timezone, first, extra), after, count)


def expression_detail(
    expression: str,
    timezone: str = "UTC",
    first: str | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The Start detail's "when" fields an expression (and its zone, first time and other
    fields) stands for."""
    when = when_detail(expression)
    detail: dict[str, Any] = {**when, "timezone": timezone, **(extra or {})}
    if first is not None:
        if "frequency" not in when:
            raise ValidationFailed.of(
                "first",
                f"only a frequency takes a first time, not {next(iter(when))}",
                'remove it, or give a frequency such as "DAILY"',
            )
        detail["at"] = first
    return detail


def detail_fire_times(
    when: dict[str, Any], after: datetime, count: int = 5, calendar: Calendar | None = None
) -> list[datetime]:
    """Up to ``count`` fires, strictly after ``after``, of a Start detail's "when" fields
    (with its timezone and bounds), as the detail itself would schedule them. With a
    ``flexibleWindow``, each occurrence's instant in it when the detail has an ``id`` (the
    instant is fixed by it), else the scheduled times."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
        raise ValidationFailed.of(
            "count", f"{count!r} is not from 1 to {MAX_COUNT}", f"give 1 to {MAX_COUNT}"
        )
    request = parse_start_detail({"id": "preview", **when}, now=after)
    schedule = request.schedule
    if "id" not in when:  # no instant in a window without the id that fixes it
        schedule = replace(schedule, window=None)
    if schedule.calendar is not None and calendar is not None:  # its content, from the stack
        schedule = replace(schedule, calendar=replace(schedule.calendar, calendar=calendar))
    scheduled = schedule.upcoming(after + _STRICTLY_AFTER, count)
    if schedule.window is None and schedule.calendar is None:
        return scheduled
    # The instant each occurrence fires at: shifted past its calendar's exclusions, and in its
    # flexible window at the instant the action's id fixes.
    seed = str(when.get("id", ""))
    return [ceil_ms(schedule.fire_time(s, seed)) for s in scheduled]


@dataclass(frozen=True)
class AroundChange:
    """The fires around a zone's next DST change: the last ones before it and the first after."""

    change: datetime
    offset_before: timedelta
    offset_after: timedelta
    before: list[datetime]
    after: list[datetime]


def around_dst_change(
    when: dict[str, Any], after: datetime, per_side: int = 3
) -> AroundChange | None:
    """The fires of a Start detail's "when" around its zone's next DST change after ``after``,
    ``per_side`` on each side (fewer when there are none that near), as the detail would
    schedule them; None for a zone without DST in the next two years."""
    schedule = parse_start_detail({"id": "preview", **when}, now=after).schedule
    zone = load_zone(schedule.timezone)
    change = next_transition(zone, after)
    if change is None:
        return None
    start = max(after, change - _AROUND_REACH)
    before: list[datetime] = []
    later: list[datetime] = []
    fire = schedule.first_fire_time(start + _STRICTLY_AFTER)
    fired = 0
    while fire is not None and len(later) < per_side and fired < _AROUND_MAX:
        (before if fire < change else later).append(fire)
        fired += 1
        fire = schedule.next_fire_time(fire, fired)
    return AroundChange(
        change,
        (change - _SECOND).astimezone(zone).utcoffset() or timedelta(0),
        change.astimezone(zone).utcoffset() or timedelta(0),
        before[-per_side:],
        later,
    )


def format_fire_times(times: list[datetime], timezone: str) -> list[dict[str, Any]]:
    """JSON-ready rows, numbered from 1: each fire in UTC and on the wall clock of ``timezone``."""
    zone = load_zone(timezone)
    return [
        {
            "n": number,
            "utc": iso_exact(fire),
            "local": fire.astimezone(zone).isoformat(),
            "zone": zone.key,
        }
        for number, fire in enumerate(times, start=1)
    ]


def _is_duration(text: str) -> bool:
    try:
        parse_duration(text, "expression")
    except ValidationFailed:
        return False
    return True


def _is_iso_time(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True
