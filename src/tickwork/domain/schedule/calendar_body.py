"""A calendar as a request sends it (``tickwork calendar put``, ``PUT /calendars/{name}``),
declared: ``timezone``, ``dates`` (ISO dates excluded whole), ``hours`` (weekday or range →
windows ``HH:MM-HH:MM`` in which fires are allowed) and ``description``. The API's request body
is this model; ``Calendar.parse`` reads every calendar through it.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, model_validator

from tickwork.domain.errors import FieldProblem, ValidationFailed
from tickwork.domain.schedule.wallclock import load_zone
from tickwork.domain.wire import read, refusal

__all__ = [
    "MAX_DATES",
    "MAX_WINDOWS",
    "WEEKDAYS",
    "CalendarBody",
    "parse_dates",
    "parse_hours",
    "read_calendar_body",
]

MAX_DATES = 1_000
MAX_WINDOWS = 8  # allowed windows per weekday
WEEKDAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_WINDOW = re.compile(r"([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-4]):([0-5]\d)")
_DAY_RANGE = re.compile(r"(MON|TUE|WED|THU|FRI|SAT|SUN)(?:-(MON|TUE|WED|THU|FRI|SAT|SUN))?")
_HOURS_FIX = 'give {"MON-FRI": ["09:00-17:00"], "SAT": ["10:00-14:00"]}'
_FIELDS = "give timezone, dates, hours and description only"

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


def _checked(parse: Any) -> Any:
    """A validator: the value as sent, when ``parse`` finds no problem in it."""

    def check(value: Any) -> Any:
        _, problems = parse(value)
        if problems:
            raise refusal(problems[0].problem, problems[0].fix, problems)
        return value

    return check


def _timezone(value: Any) -> str:
    try:
        load_zone(value)
    except ValidationFailed as refused:
        raise refusal(refused.problems[0].problem, refused.problems[0].fix) from refused
    return str(value)


def _description(value: Any) -> str | None:
    if value is not None and (not isinstance(value, str) or len(value) > 500):
        raise refusal("is not a text of up to 500 characters", "shorten it")
    return value


class CalendarBody(BaseModel):
    """An exclusion calendar: dates excluded whole, and weekly hours outside which every
    moment is excluded, in its time zone."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    timezone: Annotated[str, PlainValidator(_timezone, json_schema_input_type=str)] = Field(
        default="UTC", description="The IANA zone its dates and hours are in."
    )
    dates: Annotated[
        list[str], PlainValidator(_checked(parse_dates), json_schema_input_type=list[str])
    ] = Field(
        default_factory=list,
        description="Dates excluded whole (ISO 8601, such as 2026-12-25), up to 1,000.",
        examples=[["2026-12-25", "2026-12-28"]],
    )
    hours: Annotated[
        dict[str, list[str]] | None,
        PlainValidator(
            lambda value: None if value is None else _checked(parse_hours)(value),
            json_schema_input_type=dict[str, list[str]] | None,
        ),
    ] = Field(
        default=None,
        description="The weekly hours fires are allowed in: a weekday or a range of them "
        '(MON..SUN, "MON-FRI") to windows "HH:MM-HH:MM" (end after start, up to "24:00"). A '
        "weekday it does not name is excluded whole. Left out: every hour of a date not "
        "excluded is allowed.",
        examples=[{"MON-FRI": ["09:00-17:00"]}],
    )
    description: Annotated[
        str | None, PlainValidator(_description, json_schema_input_type=str | None)
    ] = Field(default=None, description="What it is.", json_schema_extra={"maxLength": 500})

    @model_validator(mode="after")
    def _allows_some_hour(self) -> CalendarBody:
        if self.hours is not None and not any(parse_hours(self.hours)[0].values()):
            raise refusal(
                "allows no hour of any day",
                'give a window such as {"MON-FRI": ["09:00-17:00"]}, or leave hours out',
                [
                    FieldProblem(
                        "hours",
                        "allows no hour of any day",
                        'give a window such as {"MON-FRI": ["09:00-17:00"]}, or leave hours out',
                    )
                ],
            )
        return self

    def excluded_dates(self) -> frozenset[date]:
        return parse_dates(self.dates)[0]

    def allowed_hours(self) -> Hours | None:
        return None if self.hours is None else parse_hours(self.hours)[0]


def read_calendar_body(body: Any) -> CalendarBody:
    """``body`` as a calendar, or ``ValidationFailed`` naming every bad field and its fix."""
    return read(
        CalendarBody,
        body,
        "",
        not_object=("is not a JSON object", "send the calendar as an object"),
        unknown=lambda path: ("is not a field of a calendar", _FIELDS),
    )
