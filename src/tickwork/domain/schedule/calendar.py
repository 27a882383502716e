"""Exclusion calendars: named sets of dates (holidays) and weekly business hours that a
schedule's fires must respect (Temporal's ``exclude_calendars``, Quartz's calendars).

A calendar, read in its own IANA zone, excludes a moment when its local date is one of
``dates``, or when ``hours`` are given and the moment lies outside them (``hours`` names, for
each weekday, the local windows ``HH:MM-HH:MM`` in which fires are allowed; a weekday it does not
name is excluded whole).

A schedule that names a calendar (``CalendarUse``) treats an excluded occurrence as its policy
says: ``SKIP`` (the default) — it is not an occurrence at all, and the schedule goes on with the
next allowed one; ``SHIFT`` — it fires at the calendar's next allowed moment instead, unless an
occurrence of the schedule comes first by then (that one stands for it), so fires keep the
schedule's order and never meet.

The record keeps a snapshot of the calendar with the schedule (under the seal); each fire
recorded refreshes it from the stack, so a change to a calendar applies from the next fire
planned on. Pure: nothing here reads the stack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from tickwork.domain.identifiers import check_name
from tickwork.domain.schedule.calendar_hours import MAX_DATES, WEEKDAYS, parse_hours
from tickwork.domain.schedule.wallclock import load_zone, local_to_utc, next_transition

__all__ = [
    "CALENDAR_NAME_PATTERN",
    "CALENDAR_NAME_RULE",
    "MAX_DATES",
    "Calendar",
    "CalendarUse",
    "Excluded",
    "check_calendar_name",
]

CALENDAR_NAME_PATTERN = re.compile(r"[0-9A-Za-z_.-]{1,64}")
CALENDAR_NAME_RULE = "1-64 of letters, digits and - _ ."
REACH = timedelta(days=1_100)  # how far ahead the next allowed moment is looked for (past
# the longest run of excluded dates a calendar can hold: 1,000)


class Excluded(StrEnum):
    """What a schedule does with an occurrence its calendar excludes."""

    SKIP = "SKIP"
    SHIFT = "SHIFT"


def check_calendar_name(name: Any, field: str = "name") -> str:
    return check_name(
        name,
        CALENDAR_NAME_PATTERN,
        field,
        "a calendar name",
        f'use {CALENDAR_NAME_RULE}, e.g. "uk-bank-holidays"',
    )


@dataclass(frozen=True)
class Calendar:
    """Dates excluded whole, and (if given) the weekly windows fires are allowed in, local to
    ``timezone``. ``hours`` maps a weekday (0 = Monday) to its windows in minutes of the day,
    ``[start, end)``; None: every hour of a date not excluded is allowed."""

    name: str
    timezone: str = "UTC"
    dates: frozenset[date] = frozenset()
    hours: dict[int, tuple[tuple[int, int], ...]] | None = None
    description: str | None = None
    version: int = 1
    updated_at: datetime | None = field(default=None, compare=False)
    # The stack's seal over ``to_dict()`` as stored (``integrity.calendar_seal``): set on the
    # stack's own copy only; a record's snapshot is under the record's seal instead.
    seal: str | None = field(default=None, compare=False, repr=False)

    @property
    def zone(self) -> ZoneInfo:
        return load_zone(self.timezone)

    # --- the rule ---------------------------------------------------------------------------
    def excludes(self, moment: datetime) -> bool:
        local = moment.astimezone(self.zone)
        if local.date() in self.dates:
            return True
        if self.hours is None:
            return False
        minute = local.hour * 60 + local.minute
        windows = self.hours.get(local.weekday(), ())
        return not any(start <= minute < end for start, end in windows)

    def next_allowed(self, moment: datetime) -> datetime | None:
        """The first moment at or after ``moment`` that is not excluded (to the minute, or
        ``moment`` itself when allowed); None within ``REACH``.

        An allowed span begins where the local clock enters a window (at a window's start, or
        at midnight of a date not excluded) or where a DST change carries the clock into one.
        A window's start the spring-forward gap skips begins at the gap's end; one the
        fall-back hour repeats begins twice."""
        if not self.excludes(moment):
            return moment
        zone = self.zone
        day = moment.astimezone(zone).date()
        found: datetime | None = None
        for _ in range(REACH.days + 1):
            if day not in self.dates:
                for start in self._starts(day):
                    for candidate in _instants(day, start, zone):
                        if moment < candidate and not self.excludes(candidate):
                            found = candidate if found is None else min(found, candidate)
                if found is not None:
                    break
            day += timedelta(days=1)
        # A DST change may carry the clock back into a window, or into a date not excluded.
        for change in _changes(zone, moment, found or moment + REACH):
            if not self.excludes(change) and (found is None or change < found):
                return change
        return found

    def _starts(self, day: date) -> list[int]:
        """The minutes of ``day`` an allowed span starts at."""
        if self.hours is None:
            return [0]
        return sorted(start for start, _ in self.hours.get(day.weekday(), ()))

    # --- as stored and as sent ----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        stored: dict[str, Any] = {
            "name": self.name,
            "timezone": self.timezone,
            "dates": sorted(d.isoformat() for d in self.dates),
            "version": self.version,
        }
        if self.hours is not None:
            stored["hours"] = {
                WEEKDAYS[day]: [_window_text(w) for w in windows]
                for day, windows in sorted(self.hours.items())
            }
        if self.description:
            stored["description"] = self.description
        if self.updated_at is not None:
            stored["updatedAt"] = self.updated_at.astimezone(UTC).isoformat()
        return stored

    @classmethod
    def from_dict(cls, stored: dict[str, Any]) -> Calendar:
        """A calendar as ``to_dict`` wrote it (or as a request sends it: ``parse`` checks)."""
        hours = stored.get("hours")
        return cls(
            name=stored["name"],
            timezone=stored.get("timezone", "UTC"),
            dates=frozenset(date.fromisoformat(d) for d in stored.get("dates", [])),
            hours=None if hours is None else parse_hours(hours)[0],
            description=stored.get("description"),
            version=int(stored.get("version", 1)),
            updated_at=(
                datetime.fromisoformat(stored["updatedAt"]) if stored.get("updatedAt") else None
            ),
        )

    @classmethod
    def parse(cls, name: str, body: Any, version: int, now: datetime) -> Calendar:
        """A calendar from a request: ``timezone``, ``dates`` (ISO dates), ``hours`` (weekday or
        range → windows, e.g. ``{"MON-FRI": ["09:00-17:00"]}``), ``description``, read by its
        declared model (``calendar_body.CalendarBody``): every bad field is named, with its
        fix."""
        from tickwork.domain.schedule.calendar_body import read_calendar_body  # its model

        check_calendar_name(name)
        given = read_calendar_body(body)
        return cls(
            name,
            given.timezone,
            given.excluded_dates(),
            given.allowed_hours(),
            given.description,
            version,
            now,
        )


@dataclass(frozen=True)
class CalendarUse:
    """A schedule's calendar: its name, the policy for an excluded occurrence, and the snapshot
    of the calendar the record holds (None until the stack supplies it)."""

    name: str
    policy: Excluded = Excluded.SKIP
    calendar: Calendar | None = None

    def to_dict(self) -> dict[str, Any]:
        stored: dict[str, Any] = {"name": self.name, "policy": str(self.policy)}
        if self.calendar is not None:
            stored["snapshot"] = self.calendar.to_dict()
        return stored

    @classmethod
    def from_dict(cls, stored: dict[str, Any] | None) -> CalendarUse | None:
        if stored is None:
            return None
        snapshot = stored.get("snapshot")
        return cls(
            stored["name"],
            Excluded(stored.get("policy", Excluded.SKIP)),
            None if snapshot is None else Calendar.from_dict(snapshot),
        )


def _instants(day: date, minute: int, zone: ZoneInfo) -> tuple[datetime, ...]:
    """The instants at which the local clock of ``day`` reaches ``minute``: one; two in the
    repeated fall-back hour; the gap's end when the spring-forward gap skips it."""
    wall = datetime.combine(day, time(minute // 60, minute % 60))
    first = local_to_utc(wall, zone)
    if first is None:  # in the gap: where it ends
        before_gap = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
        after = next_transition(zone, before_gap)
        return () if after is None else (after,)
    second = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
    return (first,) if second == first else (first, second)


def _changes(zone: ZoneInfo, after: datetime, until: datetime) -> list[datetime]:
    """The instants in ``(after, until]`` at which ``zone``'s offset changes."""
    found: list[datetime] = []
    for year in range(after.year, until.year + 1):
        found += (t for t in _changes_in(zone.key, year) if after < t <= until)
    return found


@lru_cache(maxsize=256)
def _changes_in(zone_key: str, year: int) -> tuple[datetime, ...]:
    """The instants of ``year`` (UTC) at which the zone's offset changes."""
    zone = load_zone(zone_key)
    moment = datetime(year, 1, 1, tzinfo=UTC)
    end = datetime(year + 1, 1, 1, tzinfo=UTC)
    found: list[datetime] = []
    while (change := next_transition(zone, moment)) is not None and change < end:
        found.append(change)
        moment = change
    return tuple(found)


def _window_text(window: tuple[int, int]) -> str:
    start, end = window
    return f"{start // 60:02d}:{start % 60:02d}-{end // 60:02d}:{end % 60:02d}"
