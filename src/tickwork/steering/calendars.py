"""Named exclusion calendars: kept in the stack, managed from the CLI and the API, referred to
by schedules (``domain.schedule.calendar`` holds the rules).

A calendar is written sealed (``fire.sealing``), and an edit never silently ends or freezes a
schedule that names it (docs/protocol.md, "Calendars under the seal"):

- an edit that would leave a live schedule naming it with no allowed fire within the search
  bound is refused (``CalendarEndsSchedules``), naming them — unless the caller asks for it by
  name (``hold_schedules``): then those schedules are held, paused on the calendar, in
  attention, never ended on its account;
- once written, each live schedule naming it is planned again on it: a fire the old calendar
  pushed out comes back to the first one the new calendar allows, and a schedule held on it
  resumes once it allows a fire. (A later fire is left as planned: its calendar is checked
  when it comes due.)

How a fire reads the calendar it names — a snapshot under the record's seal, checked when the
fire comes due, taken afresh for the next fire planned — is the fire wing's
(``fire.calendar_reads``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from tickwork.domain.action import LIVE, Action, Status
from tickwork.domain.action.upcoming import next_fire_after
from tickwork.domain.announcements import Paused
from tickwork.domain.errors import (
    ActionConflict,
    CalendarEndsSchedules,
    CalendarNotFound,
    CalendarTampered,
    TransitionRefused,
)
from tickwork.domain.schedule.calendar import Calendar, check_calendar_name
from tickwork.domain.times import ceil_ms
from tickwork.fire import writes
from tickwork.fire.calendar_reads import holding_calendar, with_fresh_calendar
from tickwork.fire.launch import launch, stop_own_execution
from tickwork.fire.planning import plan
from tickwork.fire.sealing import calendar_seal_holds, sealed_calendar
from tickwork.fire.writes import decided_again
from tickwork.steering.lock import is_locked
from tickwork.steering.needs import Manages, Steers, Sweeps
from tickwork.steering.pause import resume_action

__all__ = [
    "CalendarPut",
    "calendar_view",
    "delete_calendar",
    "get_calendar",
    "list_calendars",
    "put_calendar",
]


@dataclass(frozen=True)
class CalendarPut:
    """A calendar written, whether it is new, and what became of the schedules naming it."""

    calendar: Calendar
    created: bool
    planned_again: list[str] = field(default_factory=list)  # their next fire came earlier
    resumed: list[str] = field(default_factory=list)  # held on it, and it allows a fire now
    held: list[str] = field(default_factory=list)  # it allows none of their fires (asked for)


def put_calendar(
    name: str, body: Any, deps: Sweeps, *, hold_schedules: bool = False
) -> CalendarPut:
    """Create the calendar, or replace the one of that name (its version goes up), sealed by
    the stack; then plan the live schedules naming it again on it. Refused, before anything is
    written, when it would leave a live schedule with no fire within the search bound — unless
    ``hold_schedules``. (A stored one changed outside tickwork is replaced all the same: what
    is put is what the caller means it to hold.)"""
    check_calendar_name(name)
    version = _version_after(name, deps)
    now = deps.clock.now()
    calendar = Calendar.parse(name, body, version, now)
    naming = _naming(name, deps)
    ending = [a.id for a in naming if _ends_on(a, calendar, now)]
    if ending and not hold_schedules:
        raise CalendarEndsSchedules(name, ending)
    deps.calendars.put(sealed_calendar(calendar, deps))
    put = CalendarPut(calendar, version == 1)
    firing = [a.id for a in naming if a.status is Status.IN_PROGRESS]
    for action_id, note in [(a.id, True) for a in naming] + [(i, False) for i in firing]:
        # A fire under way is recorded by its task, which reads the calendar as it records
        # (its record noted, so that it does): one recorded while this put ran is looked at
        # again, after the others.
        try:
            done = decided_again(lambda i=action_id, n=note: _plan_again(i, name, deps, n))  # type: ignore[misc]
        except (ActionConflict, TransitionRefused):
            continue  # it kept changing (fires recorded): each planned its next on the new one
        if done and action_id not in getattr(put, done):
            getattr(put, done).append(action_id)
    return put


def _version_after(name: str, deps: Steers) -> int:
    """The version the calendar is written at: after the stored one's (one whose content cannot
    be read: after the version its item says)."""
    try:
        before = deps.calendars.get(name)
    except CalendarTampered as unreadable:
        return (unreadable.version or 0) + 1
    return 1 if before is None else before.version + 1


def _naming(name: str, deps: Sweeps) -> list[Action]:
    """The live schedules that name the calendar (from their index, never a scan)."""
    return [
        a
        for a in deps.queries.naming_calendar(name)
        if a.status in LIVE and a.schedule.calendar is not None and a.schedule.calendar.name == name
    ]


def _on(action: Action, calendar: Calendar) -> Action:
    """The action as it would stand with ``calendar`` as its schedule's."""
    use = action.schedule.calendar
    assert use is not None
    schedule = replace(action.schedule, calendar=replace(use, calendar=calendar))
    return replace(action, schedule=schedule)


def _ends_on(action: Action, calendar: Calendar, now: datetime) -> bool:
    """Whether ``calendar`` would leave the live schedule with no fire after ``now`` within the
    search bound, though its own schedule has one (one already held on it is held already)."""
    if action.held_by_calendar == calendar.name or not action.repeat:
        return False
    return (
        holding_calendar(_on(action, calendar), lambda a: next_fire_after(a, now, None)) is not None
    )


def _plan_again(action_id: str, name: str, deps: Steers, note: bool = True) -> str | None:
    """Plan the schedule again on the calendar as just written: which of ``CalendarPut``'s
    lists it belongs in, or None when nothing changed. ``note``: a fire under way has its
    record noted (once: the look again after the others does not)."""
    action = deps.records.get(action_id)
    if action is None or action.schedule.calendar is None or action.schedule.calendar.name != name:
        return None
    now = deps.clock.now()
    if action.status is Status.PAUSED:
        if action.held_by_calendar != name:
            return None  # paused by its user: a resume plans it on the calendar as it is then
        why = f"calendar {name} allows a fire again"
        return "resumed" if resume_action(action_id, why, deps).outcome == "resumed" else None
    if action.status is Status.IN_PROGRESS:
        # Firing now: its task plans the next fire as it records it, reading the calendar
        # then. Its record is changed under it, so that a task that read the record (and the
        # calendar) before this put reads both again before it writes.
        if note:
            writes.note_calendar_put(deps.records, action, name)
        return None
    if action.status is not Status.PENDING or action.execution_time is None:
        return None
    fresh = with_fresh_calendar(action, now, deps)
    first = next_fire_after(fresh, now, None)
    if first is None:
        holder = holding_calendar(fresh, lambda a: next_fire_after(a, now, None))
        return _hold(action, fresh, now, deps) if holder == name else None
    first = ceil_ms(first)
    if first >= action.execution_time or is_locked(action, now, deps):
        return None  # a later one: its calendar is checked when the planned fire comes due
    why = f"planned again: calendar {name} (version {fresh.schedule.calendar.calendar.version})"  # type: ignore[union-attr]
    again = plan(
        fresh.planned_again(now, first, f"{why} allows an earlier fire", deps.limits), now, deps
    )
    writes.plan_again(deps.records, action, again)
    launch(again, now, deps)
    stop_own_execution(action, why, deps)
    return "planned_again"


def _hold(action: Action, fresh: Action, now: datetime, deps: Steers) -> str:
    """Held on its calendar (asked for by name): paused, in attention, resumed by itself once
    the calendar allows a fire again."""
    name = fresh.schedule.calendar.name  # type: ignore[union-attr]
    held = fresh.held(now, name, deps.limits)
    writes.hold(deps.records, action, held)
    stop_own_execution(action, f"held on calendar {name}", deps)
    deps.publisher.publish(Paused.of(held))
    return "held"


def calendar_view(calendar: Calendar, deps: Manages) -> dict[str, Any]:
    """The calendar as it is shown, and whether it is as tickwork wrote it (``sealed``: false
    once its item was changed outside tickwork: fires do not take it; put it again)."""
    return {**calendar.to_dict(), "sealed": calendar_seal_holds(calendar, deps)}


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
