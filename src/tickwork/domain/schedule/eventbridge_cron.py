"""EventBridge ``cron(Minutes Hours Day-of-month Month Day-of-week Year)`` in croniter terms.

EventBridge numbers the days of the week 1-7 = SUN-SAT; standard cron (and croniter)
numbers them 0-6 = SUN-SAT, so every day number moves down by one. ``?`` becomes ``*``,
``6L`` (last Friday) becomes croniter's ``L5``, ``6#3`` (third Friday) becomes ``5#3``,
and the year field, which croniter has no place for, becomes a set of years to keep.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tickwork.domain.errors import ValidationFailed

__all__ = ["EVENTBRIDGE_EXAMPLE", "EventBridgeCron", "is_eventbridge_cron", "translate"]

EVENTBRIDGE_EXAMPLE = (
    '"cron(0 9 ? * MON-FRI *)" (minutes hours day-of-month month day-of-week year)'
)
_FORM = re.compile(r"cron\((.*)\)", re.IGNORECASE | re.DOTALL)
_DAY_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_YEAR_ITEM = re.compile(r"(\*|\d{4})(?:-(\d{4}))?(?:/(\d+))?")
FIRST_YEAR, LAST_YEAR = 1970, 2199


@dataclass(frozen=True)
class EventBridgeCron:
    standard: str
    years: frozenset[int] | None


def is_eventbridge_cron(text: str) -> bool:
    return text.strip().lower().startswith("cron(")


def translate(text: str, field: str = "cron") -> EventBridgeCron:
    """The 5-field standard expression and the allowed years (None: any year)."""
    match = _FORM.fullmatch(text.strip())
    parts = match[1].split() if match else []
    if len(parts) != 6:
        raise _refuse(field, text, f"has {len(parts)} fields where EventBridge cron has 6")
    minutes, hours, day_of_month, month, day_of_week, year = parts
    if (day_of_month == "?") == (day_of_week == "?"):
        raise _refuse(field, text, "exactly one of day-of-month and day-of-week must be ?")
    if "LW" in day_of_month.upper():
        raise _refuse(field, text, "LW (last weekday of the month) is not supported")
    try:
        days = "*" if day_of_week == "?" else ",".join(map(_day_item, day_of_week.split(",")))
        years = _years(year)
    except ValueError as error:
        raise _refuse(field, text, str(error)) from error
    day = "*" if day_of_month == "?" else day_of_month
    return EventBridgeCron(" ".join((minutes, hours, day, month, days)), years)


def _day_item(item: str) -> str:
    upper = item.upper()
    if upper == "L":
        return "6"
    if "#" in upper:
        day, nth = upper.split("#", 1)
        return f"{_day(day)}#{nth}"
    if upper.endswith("L"):
        return f"L{_day(upper[:-1])}"
    base, slash, step = upper.partition("/")
    if base != "*":
        base = "-".join(_day(bound) for bound in base.split("-"))
    return f"{base}{slash}{step}"


def _day(token: str) -> str:
    if token in _DAY_NAMES:
        return str(_DAY_NAMES.index(token))
    if token.isdigit() and 1 <= int(token) <= 7:
        return str(int(token) - 1)
    raise ValueError(f"day-of-week {token!r} is not 1-7 (SUN-SAT) or SUN..SAT")


def _years(field_text: str) -> frozenset[int] | None:
    if field_text == "*":
        return None
    years: set[int] = set()
    for item in field_text.split(","):
        match = _YEAR_ITEM.fullmatch(item)
        if match is None:
            raise ValueError(f"year {item!r} is not a year, range or step")
        first = FIRST_YEAR if match[1] == "*" else int(match[1])
        last = int(match[2]) if match[2] else (LAST_YEAR if match[3] or match[1] == "*" else first)
        step = int(match[3] or 1)
        if not FIRST_YEAR <= first <= last <= LAST_YEAR or step < 1:
            raise ValueError(f"year {item!r} is outside {FIRST_YEAR}-{LAST_YEAR}")
        years.update(range(first, last + 1, step))
    return frozenset(years)


def _refuse(field: str, text: str, problem: str) -> ValidationFailed:
    return ValidationFailed.of(
        field,
        f"{text!r} is not a valid EventBridge cron: {problem}",
        f"write e.g. {EVENTBRIDGE_EXAMPLE}",
    )
