"""A calendar as a request sends it (``tickwork calendar put``, ``PUT /calendars/{name}``),
declared: ``timezone``, ``dates`` (ISO dates excluded whole), ``hours`` (weekday or range →
windows ``HH:MM-HH:MM`` in which fires are allowed) and ``description``. The API's request body
is this model; ``Calendar.parse`` reads every calendar through it.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, model_validator

from tickwork.domain.errors import FieldProblem, ValidationFailed
from tickwork.domain.schedule.calendar_hours import Hours, parse_dates, parse_hours
from tickwork.domain.schedule.wallclock import load_zone
from tickwork.domain.wire import read, refusal

__all__ = ["CalendarBody", "read_calendar_body"]

_FIELDS = "give timezone, dates, hours and description only"


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
