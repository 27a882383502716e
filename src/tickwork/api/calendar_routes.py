"""Named exclusion calendars: list, read, create or replace, and delete them. A schedule names
one with its Start's ``calendar`` field."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response, content_types

from tickwork import bootstrap
from tickwork.api.documented import new_router, responses
from tickwork.api.models import (
    CalendarDeleted,
    CalendarList,
    CalendarView,
    ErrorBody,
)
from tickwork.domain.schedule.calendar_body import CalendarBody
from tickwork.steering.calendars import (
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
    found = list_calendars(bootstrap.from_environment())
    return CalendarList.model_validate({"calendars": [c.to_dict() for c in found]})


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
    found = get_calendar(unquote(name), bootstrap.from_environment())
    return CalendarView.model_validate(found.to_dict())


@router.put(
    "/calendars/<name>",
    summary="Create or replace a calendar",
    description="Its dates are excluded whole, and with hours, every moment outside them, in "
    "its time zone. A schedule that names it (the Start's `calendar`) skips or shifts an "
    "occurrence it excludes, as the Start's `onExcluded` says. A replace applies to those "
    "schedules from their next fire planned on (201 when new, 200 when replaced; its version "
    "goes up).",
    responses={
        **responses(200, CalendarView, "Replaced", 400, 409),
        **responses(201, CalendarView, "Created"),
    },
    tags=["calendars"],
)
def put(name: str, body: CalendarBody) -> Response[dict[str, Any]]:
    given = body.model_dump(exclude_none=True)
    written, new = put_calendar(unquote(name), given, bootstrap.from_environment())
    view = CalendarView.model_validate(written.to_dict()).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    status = HTTPStatus.CREATED if new else HTTPStatus.OK
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
