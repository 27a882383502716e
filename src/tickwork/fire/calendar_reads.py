"""The calendars as the fire path reads them: a Start's calendar taken as the stack has it, a
fire's calendar checked when it comes due, and the next fire planned on it as it is then
(``domain.schedule.calendar`` holds the rules; ``steering.calendars`` manages them).

A Start that names a calendar gets its content as a snapshot, kept with the schedule under the
record's seal. Each fire recorded takes the calendar as the stack has it then (one read), so a
change applies from the next fire planned on; a fire already planned that the changed calendar
excludes is skipped when it comes due (``excluded_now``).

The stack's copy is taken only under its seal (``stack_calendar``): one changed outside tickwork
is not taken at all — a Start naming it is refused, a fire keeps the snapshot its record holds
(it is neither skipped nor moved on its account), the fire announces it (``Schedule Tampered``)
and the record notes it (the action needs attention until a fire reads the calendar sealed
again). docs/protocol.md, "Calendars under the seal".
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action
from tickwork.domain.errors import CalendarTampered, ValidationFailed
from tickwork.domain.occurrence_changes import MAX_CHANGES
from tickwork.domain.schedule import Schedule
from tickwork.domain.schedule.calendar import Calendar, Excluded, check_calendar_name
from tickwork.domain.times import ceil_ms, iso
from tickwork.fire.needs import Seals
from tickwork.fire.sealing import calendar_seal_holds, seal_holds, seal_of
from tickwork.ports.stores import CalendarStore

__all__ = [
    "SHIFTED_BY_CALENDAR",
    "LateExclusion",
    "calendars_read_once",
    "excluded_now",
    "holding_calendar",
    "late_exclusion",
    "named_calendar",
    "stack_calendar",
    "tampered_calendar",
    "with_calendar",
    "with_fresh_calendar",
]


SHIFTED_BY_CALENDAR = "missed, and calendar"  # how a move its calendar made begins


def with_calendar(schedule: Schedule, deps: Seals) -> Schedule:
    """``schedule`` with the content of the calendar it names, as the stack has it now; a
    calendar the stack does not have is refused, naming the field."""
    use = schedule.calendar
    if use is None:
        return schedule
    snapshot = replace(named_calendar(use.name, deps), seal=None)  # under the record's seal
    return replace(schedule, calendar=replace(use, calendar=snapshot))


def stack_calendar(name: str, deps: Seals, held: Calendar | None = None) -> Calendar | None:
    """The calendar as the stack has it, if it has it; ``CalendarTampered`` if what is stored
    is not as tickwork wrote it: its seal does not hold, it cannot be read, it is another
    calendar (copied over this one's item, seal and all), or — ``held``: the copy a record was
    planned on — it is older than that copy (an earlier sealed version put back over it: each
    write of a calendar is later than the one before, a deleted one made again too)."""
    calendar = deps.calendars.get(name)
    if calendar is None:
        return None
    if calendar.name != name:
        raise CalendarTampered(name, f"its item holds calendar {calendar.name!r}")
    if not calendar_seal_holds(calendar, deps):
        raise CalendarTampered(name)
    if held is not None and _older(calendar, held):
        raise CalendarTampered(
            name,
            f"version {calendar.version}, written {iso(_ms(calendar.updated_at))}, is stored "
            f"over version {held.version}, written {iso(_ms(held.updated_at))}, which its "
            "schedules were planned on: an earlier version put back",
        )
    return calendar


def _older(stored: Calendar, held: Calendar) -> bool:
    """Whether the stored calendar is an earlier version than the copy a record holds, put
    back: a lower version written no later (to the millisecond: the item and the record may
    keep times to different precisions). A calendar deleted and made again starts over at
    version 1, written later; two puts in one instant (a clock standing still) differ in
    version."""
    return stored.version < held.version and _ms(stored.updated_at) <= _ms(held.updated_at)


def _ms(moment: datetime | None) -> datetime:
    if moment is None:  # a calendar kept before it had a write time: the earliest
        return datetime.min.replace(tzinfo=UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def tampered_calendar(action: Action, deps: Seals) -> CalendarTampered | None:
    """Why the calendar the action names cannot be taken, if it cannot (for the fire to say)."""
    use = action.schedule.calendar
    if use is None:
        return None
    try:
        stack_calendar(use.name, deps, use.calendar)
    except CalendarTampered as tampered:
        return tampered
    return None


def named_calendar(name: str, deps: Seals) -> Calendar:
    """The calendar a request names in its ``calendar`` field; refused naming the field."""
    try:
        calendar = stack_calendar(check_calendar_name(name, "calendar"), deps)
    except CalendarTampered as tampered:
        raise ValidationFailed.of(
            "calendar",
            str(tampered),
            f"put it again (tickwork calendar put {name}, or PUT /calendars/{name}) so that the"
            " stack seals what it should hold",
        ) from tampered
    if calendar is None:
        raise ValidationFailed.of(
            "calendar",
            f"no calendar named {name!r} is in the stack",
            f"create it first (tickwork calendar put {name}, or PUT /calendars/{name}),"
            " or give the name of one that is",
        )
    return calendar


class _ReadOnce:
    """The stack's calendars, each read at most once (a fire's task checks its calendar before
    it runs and plans the next fire on it after: one read serves both)."""

    def __init__(self, store: CalendarStore) -> None:
        self._store = store
        self._read: dict[str, Calendar | CalendarTampered | None] = {}
        self._lock = threading.Lock()  # a batch's members run in threads

    def get(self, name: str) -> Calendar | None:
        with self._lock:
            if name not in self._read:
                try:
                    self._read[name] = self._store.get(name)
                except CalendarTampered as unreadable:
                    self._read[name] = unreadable
            read = self._read[name]
        if isinstance(read, CalendarTampered):
            raise read
        return read

    def put(self, calendar: Calendar) -> None:
        self._store.put(calendar)
        with self._lock:
            self._read.pop(calendar.name, None)

    def delete(self, name: str) -> bool:
        self.forget(name)
        return self._store.delete(name)

    def forget(self, name: str) -> None:
        """Read it again at the next ``get``: what a fire plans its next fire on is the
        calendar as the stack has it when the fire is recorded, not when it was claimed."""
        with self._lock:
            self._read.pop(name, None)

    def all(self) -> list[Calendar]:
        return self._store.all()


def calendars_read_once(deps: Dependencies) -> Dependencies:
    """``deps`` whose calendars are each read at most once: for one task's fires."""
    return replace(deps, calendars=_ReadOnce(deps.calendars))


def with_fresh_calendar(
    action: Action, now: datetime, deps: Seals, *, afresh: bool = False
) -> Action:
    """The record with its calendar as the stack has it now, sealed again (only a record whose
    seal holds: an altered one is not laundered, and only a calendar whose seal holds: one
    changed outside tickwork is noted on the record, which keeps its snapshot). Unchanged
    without a calendar, when the stack no longer has it (the snapshot stands), or when the
    version is the same. ``afresh``: read again even in a task that read it already (a fire
    being recorded: a calendar put while it ran is what its next fire is planned on)."""
    use = action.schedule.calendar
    if use is None:
        return action.trusting_calendar()
    if afresh and isinstance(deps.calendars, _ReadOnce):
        deps.calendars.forget(use.name)
    try:
        fresh = stack_calendar(use.name, deps, use.calendar)
    except CalendarTampered:
        return action.noting_tampered_calendar(use.name, now)
    action = action.trusting_calendar()
    if fresh is None or _same(use.calendar, fresh):
        return action
    if not seal_holds(action, deps):
        return action
    snapshot = replace(fresh, seal=None)  # under the record's seal from now on
    schedule = replace(action.schedule, calendar=replace(use, calendar=snapshot))
    refreshed = replace(action, schedule=schedule)
    return refreshed.sealed(seal_of(refreshed, deps))


def excluded_now(action: Action, fire_time: Any, deps: Seals) -> str | None:
    """The name of the action's calendar if it, as the stack has it now, excludes a planned
    fire at ``fire_time`` (a date added after the fire was planned); else None. A calendar
    changed outside tickwork is not taken: the fire stands as planned."""
    use = action.schedule.calendar
    if use is None:
        return None
    try:
        fresh = stack_calendar(use.name, deps, use.calendar) or use.calendar
    except CalendarTampered:
        return None
    if fresh is None or _same(use.calendar, fresh):
        return None  # planned with this very calendar: its fire is allowed, or shifted to one
    return use.name if fresh.excludes(fire_time) else None


def holding_calendar(action: Action, following: Callable[[Action], datetime | None]) -> str | None:
    """The name of the action's calendar if it is why ``following`` (the action's next fire,
    as a caller computes it) finds none: the same schedule without it has one. A schedule is
    never ended on its calendar's account: it is held on it instead."""
    use = action.schedule.calendar
    if use is None or following(action) is not None:
        return None
    free = replace(action, schedule=replace(action.schedule, calendar=None))
    return use.name if following(free) is not None else None


@dataclass(frozen=True)
class LateExclusion:
    """What becomes of a missed fire whose catch-up would run at a moment its calendar
    excludes: shifted ``to`` the calendar's next allowed moment, or skipped (``to`` None)."""

    to: datetime | None
    why: str


def late_exclusion(
    action: Action,
    fire_at: datetime,
    now: datetime,
    deps: Seals,
    rounded: timedelta = timedelta(0),
) -> LateExclusion | None:
    """None when the fire at ``fire_at`` may run ``now``: it is not missed (no later than its
    misfireThreshold past its planned wake, ``fire_at`` + ``rounded``), or its calendar allows
    ``now``. Else, as for an occurrence the calendar excludes: SKIP skips it; SHIFT moves it to
    the calendar's next allowed moment, unless the next occurrence fires by then (that one
    stands for it) or it would pass ``endTime``."""
    use = action.schedule.calendar
    if use is None or not action.catch_up.is_missed(fire_at, now - rounded):
        return None
    try:
        calendar = stack_calendar(use.name, deps, use.calendar) or use.calendar
    except CalendarTampered:  # not taken: the record's snapshot decides
        calendar = use.calendar
    if calendar is None or not calendar.excludes(now):
        return None
    why = f"{SHIFTED_BY_CALENDAR} {use.name} excludes {iso(now)}"
    if use.policy is Excluded.SKIP:
        return LateExclusion(None, why)
    target = calendar.next_allowed(now)
    following = action.schedule.next_fire_time(action.origin_of(fire_at), action.occurrence)
    end = action.schedule.end
    if (
        target is None
        or (end is not None and target > end)
        or (following is not None and action.fire_time_of(ceil_ms(following)) <= target)
        or len(action.coming_changes) >= MAX_CHANGES
    ):
        return LateExclusion(None, f"{why}; the next occurrence stands for it")
    return LateExclusion(ceil_ms(target), why)


def _same(held: Calendar | None, fresh: Calendar) -> bool:
    """Whether the record's copy is the calendar as the stack has it: the same version written
    at the same moment (a calendar deleted and made again starts over at version 1)."""
    return held is not None and (held.version, held.updated_at) == (
        fresh.version,
        fresh.updated_at,
    )
