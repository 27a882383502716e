"""Named exclusion calendars: list, read, create or replace, and delete them. A schedule names
one with its Start's ``calendar`` field."""

from __future__ import annotations

from http import HTTPStatus
from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.openapi.params import Query

from tickwork import bootstrap
from tickwork.api.documented import new_router, responses
from tickwork.api.models import (
    CalendarDeleted,
    CalendarList,
    CalendarView,
    CalendarWritten,
    ErrorBody,
)
from tickwork.domain.schedule.calendar_body import CalendarBody
from tickwork.steering.calendars import (
    calendar_view,
    delete_calendar,
    get_calendar,
    list_calendars,
    put_calendar,
)

__all__ = ["router"]

router = new_router()


@router.get(
    "/calendars",
    summary="List the calendars",
    description="Every exclusion calendar in the stack, by name.",
    responses=responses(200, CalendarList, "The calendars"),
    tags=["calendars"],
)
def calendars() -> CalendarList:
    deps = bootstrap.from_environment()
    found = list_calendars(deps)
    return CalendarList.model_validate({"calendars": [calendar_view(c, deps) for c in found]})


@router.get(
    "/calendars/<name>",
    summary="Read a calendar",
    responses={
        **responses(200, CalendarView, "The calendar", 400),
        **responses(404, ErrorBody, "No calendar has this name"),
    },
    tags=["calendars"],
)
def calendar(name: str) -> CalendarView:
    deps = bootstrap.from_environment()
    return CalendarView.model_validate(calendar_view(get_calendar(unquote(name), deps), deps))


@router.put(
    "/calendars/<name>",
    summary="Create or replace a calendar",
    description="Its dates are excluded whole, and with hours, every moment outside them, in "
    "its time zone. A schedule that names it (the Start's `calendar`) skips or shifts an "
    "occurrence it excludes, as the Start's `onExcluded` says. It is sealed by the stack: a "
    "copy changed in the table outside tickwork is never taken. A replace applies to those "
    "schedules from their next fire planned on, and each live one is planned again on it at "
    "once: a fire the old calendar pushed out comes back to the first one it allows "
    "(plannedAgain), and a schedule held on it resumes once it allows a fire (resumed). A "
    "calendar that would leave a live schedule naming it with no fire within the search bound "
    "(1,100 days) is refused with 409, naming them, unless holdSchedules=true: then they are "
    "held (paused on it, in attention, never ended; held), and resume by themselves once it "
    "allows a fire. 201 when new, 200 when replaced; its version goes up.",
    responses={
        **responses(200, CalendarWritten, "Replaced", 400, 409),
        **responses(201, CalendarWritten, "Created"),
    },
    tags=["calendars"],
)
def put(
    name: str,
    body: CalendarBody,
    hold_schedules: Annotated[
        bool,
        Query(
            alias="holdSchedules",
            description="Write it even if it allows some live schedule naming it no fire "
            "within the search bound: those are held (paused on it, in attention) until it "
            "allows one.",
        ),
    ] = False,
) -> Response[dict[str, Any]]:
    given = body.model_dump(exclude_none=True)
    deps = bootstrap.from_environment()
    put = put_calendar(unquote(name), given, deps, hold_schedules=hold_schedules)
    written = {
        **put.calendar.to_dict(),
        "plannedAgain": put.planned_again,
        "resumed": put.resumed,
        "held": put.held,
    }
    view = CalendarWritten.model_validate(written).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    status = HTTPStatus.CREATED if put.created else HTTPStatus.OK
    return Response(status, content_types.APPLICATION_JSON, view)


@router.delete(
    "/calendars/<name>",
    summary="Delete a calendar",
    description="Schedules that name it keep the copy they hold.",
    responses={
        **responses(200, CalendarDeleted, "Deleted", 400),
        **responses(404, ErrorBody, "No calendar has this name"),
    },
    tags=["calendars"],
)
def delete(name: str) -> CalendarDeleted:
    delete_calendar(unquote(name), bootstrap.from_environment())
    return CalendarDeleted(name=unquote(name), outcome="deleted")
