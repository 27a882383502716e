"""Named exclusion calendars: kept in the stack, managed from the CLI and the API, referred to
by schedules (``domain.schedule.calendar`` holds the rules).

How a fire reads the calendar it names — a snapshot under the record's seal, checked when the
fire comes due, taken afresh for the next fire planned — is the fire wing's
(``fire.calendar_reads``).
"""

from __future__ import annotations

from typing import Any

from tickwork.domain.errors import CalendarNotFound
from tickwork.domain.schedule.calendar import Calendar, check_calendar_name
from tickwork.steering.needs import Manages

__all__ = ["delete_calendar", "get_calendar", "list_calendars", "put_calendar"]


def put_calendar(name: str, body: Any, deps: Manages) -> tuple[Calendar, bool]:
    """Create the calendar, or replace the one of that name (its version goes up): the calendar
    written, and whether it is new."""
    check_calendar_name(name)
    before = deps.calendars.get(name)
    version = 1 if before is None else before.version + 1
    calendar = Calendar.parse(name, body, version, deps.clock.now())
    deps.calendars.put(calendar)
    return calendar, before is None


def get_calendar(name: str, deps: Manages) -> Calendar:
    calendar = deps.calendars.get(check_calendar_name(name))
    if calendar is None:
        raise CalendarNotFound(name)
    return calendar


def list_calendars(deps: Manages) -> list[Calendar]:
    return deps.calendars.all()


def delete_calendar(name: str, deps: Manages) -> None:
    """Remove it. The schedules that name it keep the snapshot they hold."""
    if not deps.calendars.delete(check_calendar_name(name)):
        raise CalendarNotFound(name)
