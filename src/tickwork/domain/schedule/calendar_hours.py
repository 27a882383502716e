"""A calendar's dates and weekly hours as a request gives them: read, each problem named by its
place (``calendar_body`` refuses a request with them; ``Calendar`` keeps what they mean)."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from tickwork.domain.errors import FieldProblem

__all__ = [
    "MAX_DATES",
    "MAX_WINDOWS",
    "WEEKDAYS",
    "Hours",
    "parse_dates",
    "parse_hours",
]

MAX_DATES = 1_000
MAX_WINDOWS = 8  # allowed windows per weekday
WEEKDAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_WINDOW = re.compile(r"([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-4]):([0-5]\d)")
_DAY_RANGE = re.compile(r"(MON|TUE|WED|THU|FRI|SAT|SUN)(?:-(MON|TUE|WED|THU|FRI|SAT|SUN))?")
_HOURS_FIX = 'give {"MON-FRI": ["09:00-17:00"], "SAT": ["10:00-14:00"]}'

Hours = dict[int, tuple[tuple[int, int], ...]]  # weekday (0 Monday) -> minute windows


def parse_dates(value: Any) -> tuple[frozenset[date], list[FieldProblem]]:
    """The dates, and the problems of each (fields relative to ``dates``)."""
    if not isinstance(value, list):
        return frozenset(), [FieldProblem("", "is not a list", 'give ["2026-12-25", ...]')]
    if len(value) > MAX_DATES:
        return frozenset(), [
            FieldProblem("", f"holds {len(value)} dates", f"give at most {MAX_DATES}")
        ]
    found: set[date] = set()
    problems: list[FieldProblem] = []
    for index, text in enumerate(value):
        try:
            found.add(date.fromisoformat(text))
        except (TypeError, ValueError):
            problems.append(
                FieldProblem(f"[{index}]", f"{str(text)[:40]!r} is not a date", 'give "2026-12-25"')
            )
    return frozenset(found), problems


def parse_hours(value: Any) -> tuple[Hours, list[FieldProblem]]:
    """The windows of each weekday, and the problems of each (fields relative to ``hours``)."""
    if not isinstance(value, dict):
        return {}, [FieldProblem("", "is not an object", _HOURS_FIX)]
    hours: dict[int, list[tuple[int, int]]] = {}
    problems: list[FieldProblem] = []
    for key, windows in value.items():
        days = _days(key)
        if days is None:
            problems.append(
                FieldProblem(f".{key}", "is not a weekday or a range of them", _HOURS_FIX)
            )
            continue
        if not isinstance(windows, list) or len(windows) > MAX_WINDOWS:
            problems.append(
                FieldProblem(f".{key}", f"is not a list of up to {MAX_WINDOWS} windows", _HOURS_FIX)
            )
            continue
        for index, text in enumerate(windows):
            window = _window(text)
            if window is None:
                problems.append(
                    FieldProblem(
                        f".{key}[{index}]",
                        f"{str(text)[:40]!r} is not a window HH:MM-HH:MM of one day",
                        'give "09:00-17:00" (end after start, at most "24:00")',
                    )
                )
                continue
            for day in days:
                hours.setdefault(day, []).append(window)
    return {day: tuple(sorted(windows)) for day, windows in hours.items()}, problems


def _window(text: Any) -> tuple[int, int] | None:
    match = _WINDOW.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    start = int(match[1]) * 60 + int(match[2])
    end = int(match[3]) * 60 + int(match[4])
    return (start, end) if start < end <= 1440 else None


def _days(key: Any) -> list[int] | None:
    match = _DAY_RANGE.fullmatch(key.strip().upper()) if isinstance(key, str) else None
    if match is None:
        return None
    first = WEEKDAYS.index(match[1])
    last = WEEKDAYS.index(match[2]) if match[2] else first
    if last < first:
        return None
    return list(range(first, last + 1))
